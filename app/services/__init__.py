"""The service layer: what the API's routes (app/api) and the dashboard's pages (app/web) both do.

Plain functions taking typed inputs (a session, the caller, the service settings, the runner, request body
models) and returning typed results or raising the domain errors of app/services/errors.py; a route is a
thin wrapper that maps those errors onto HTTP statuses (app/api/errors.py), and a page shows their
message. No page calls a route function, and nothing here knows of HTTP."""
