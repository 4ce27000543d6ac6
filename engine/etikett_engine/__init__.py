"""Etikett's engine: the label, form and flow documents (`dsl`), CEL (`cel`), the flow engine
(`flows`), the problem catalogue (`errors`), outgoing HTTP and printer data, installed alike by
the service, the Runner and its installer (distribution `etikett-engine`)."""
