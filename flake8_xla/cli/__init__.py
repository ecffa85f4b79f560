"""The standalone CLI's parts: configuration (:mod:`.config`), which files to lint and how
(:mod:`.files`), what to report (:mod:`.select`) and the output formats (:mod:`.output`).
The entry point is :func:`flake8_xla.__main__.main`."""
