"""Grading submissions: public and hidden checks over a pristine course, many formats.

`minillm grade` (see `grader.commands.grade`) is built from these parts:

- `checks`: a lab's public checks plus its hidden ones (``solutions/labNN/hidden.py``);
- `submission`: what is taken from a submission (only ``labs/*/student.py``) and how a
  directory, a git checkout (`gitread`: its commit, read without running git) or a zip
  is read safely;
- `course`: the pristine copy of the course that one run grades against;
- `run`: the seam that runs one submission's labs, each in fresh sandboxes, and returns
  their `LabResult`s; `backends`: the isolation levels that give it its sandboxes;
  `worker`: the process that hosts it;
- `wire`: a lab's result between processes;
- `batch`: many submissions in parallel, result files rewritten as results arrive;
- `bundle`: a Gradescope autograder built from the course.

The result types are in `grader.results`; the renderers, one per ``--format``, and the
class report in `grader.render`.
"""
