"""Clients of the outside services the research tools read (OpenAlex, SearxNG, SEC EDGAR, web
pages). Each turns a service's failure into an ExternalServiceError worded for the reader; the
tools return that message as ToolResult.error instead of raising."""
