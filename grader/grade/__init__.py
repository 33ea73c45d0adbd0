"""Grading submissions: public and hidden checks over a pristine course, many formats.

`minillm grade` (see `grader.commands.grade`) is built from these parts:

- `checks`: a lab's public checks plus its hidden ones (``solutions/labNN/hidden.py``);
- `submission`: what is taken from a submission (only ``labs/*/student.py``) and how a
  directory, a git checkout or a zip is read safely;
- `course`: the pristine copy of the course that one run grades against;
- `run`: the seam that runs one submission's labs and returns their `LabResult`s (the
  isolation backend wraps this), and the worker process that hosts it;
- `batch`: many submissions in parallel, a progress bar, result files rewritten as
  results arrive;
- `classreport`: one self-contained HTML page about a whole class.
"""
