"""The client libraries (clients/python, clients/typescript) and their framework integrations, each
against a really served mnemo (uvicorn, 2 workers, real Redis and Chroma)."""
