"""Business rules per resource group, as plain functions over plain models. No FastAPI here."""
