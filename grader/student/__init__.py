"""The student's tools around verify: `progress` (what ``minillm status`` shows, with the
verdicts remembered in ``.minillm/``) and `pytest_plugin` (every check as a pytest item,
for IDEs and ``--pdb``)."""
