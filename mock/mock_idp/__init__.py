"""A mock of the Microsoft identity platform (v2.0 endpoints, B2C) and Microsoft Graph.

Run it with ``python3 -m mock_idp`` (cwd or PYTHONPATH = mock/); see README.md.
It shares no code with the product and binds 127.0.0.1 only.
"""

__version__ = "1.0.0"
