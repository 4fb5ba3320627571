"""Backend-neutral rules of the forest: what every backend checks the same way.

`append` (payload preparation, the head/parent/version checks of an append),
`reading` (schema versions and path damage on the way out), `integrity` (what
`check` reports and what `repair` may do), `trees` (workspace and agent tree
rules), `refs` (how typed ids resolve). Pure functions over rows and values:
a backend runs the SQL, these decide.
"""
