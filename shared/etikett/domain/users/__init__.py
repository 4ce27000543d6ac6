"""People and their access: users and roles, signing in, passwords, bearer tokens, and the
service-wide policies (aiFreigabePflicht)."""
