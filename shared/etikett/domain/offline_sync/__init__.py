"""The sync of what a Runner printed while the service was away (docs/concepts/offline-sites.md):
each offline print is checked on its own (checks.py) — refused with a reason, so that one bad
print never holds back the others — or becomes what an online print makes, exactly once
(archiving.py): a finished job, one print-archive entry per record, its audit entry and its
`print.*` event. The upload's answer names each print (models.py); sync.py runs an upload.

Exactly once: the job's id derives from the print's id (`opr_X` → `job_X`), written on the
condition that it is new, in the transaction that holds the archive entries, the audit entry
and the event. A print sent again (an answer lost on the way back) finds its job: `already`,
and nothing more is written."""
