"""Import: label files from the systems people leave (ZPL II formats, gLabels documents) turned
into label documents (`etikett_engine.dsl.label`), with a report of everything that could not be
mapped.

`formats.convert(name, data, dpi=…)` detects the format, refuses hostile or broken input with a
clear problem (nothing is half-converted) and answers one document per label in the file. Bounds:
the file size, what a gzip stream may expand to, XML depth and element count, formats and objects
per file, and every graphic's declared size are checked before the work they would cost.
"""
