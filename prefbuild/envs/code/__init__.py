"""The ``code`` env: math and programming problems solved with a sandboxed ``code_interpreter`` tool."""
