"""DDL of released migrations, frozen as the literal statements they ran.

One module per migration, named after it. Nothing imports the live search
code from here, and nothing here is ever edited.
"""
