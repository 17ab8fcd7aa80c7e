"""The tools: the `ptocpu` command, verify, bench, the runner and pytest plugin for PyPTO
programs, the docs tables. They import the package, nothing imports them."""
