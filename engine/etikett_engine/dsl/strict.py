"""What every document model of the DSL shares (labels, forms, flows): the strict base that
refuses unknown fields, the patterns of names and object ids, and how large a version number
gets. Apart from the label document, so that a flow or a form declares its models without the
label's."""

from pydantic import ConfigDict

from etikett_engine.model import Model

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
OBJECT_ID = r"^[A-Za-z0-9_.-]{1,64}$"
# The largest version number a document reference names (`lbl_…@N`: nine digits at most).
MAX_VERSION = 999_999_999


class Strict(Model):
    # Built on first use (`Model`), not when the class is defined: most functions never validate
    # a label document, and each builds these once per process either way.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
