"""Ready-made starting points: media presets (label stock) and Vorlagen (label templates)."""
