"""The instructor's tools on the course itself.

`stubs` writes each lab's student.py from its solution's markers, `pack` the student
edition, `mutants` runs the catalogue of wrong implementations, `handouts` keeps every
output block of a handout true (`handout_skeleton`: the layout every handout follows), and
`selfcheck` runs all of it at once (``minillm self-check``).
"""
