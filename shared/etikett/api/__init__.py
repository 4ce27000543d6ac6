"""HTTP: FastAPI routers per resource group, access declarations, problem details, OpenAPI."""
