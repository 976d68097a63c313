"""Server start-up around uvicorn: the WebSocket protocol class, the garbage collector's
set-up and the logging that keeps secrets out of the log."""
