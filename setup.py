"""What setup.cfg cannot say: the metadata made from ``flake8_xla.__url__`` (the one place the
project's address is written) and the long description.

The long description is README.md with its relative links (``docs/index.md``,
``docs/usage.md#vs-code``, ``#install``) made absolute, to the files at this release's tag: the
index page has no files beside it, so a relative link there is dead (an in-page ``#install``
works there and is kept). Everything else is in setup.cfg."""

import re
import runpy
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: flake8_xla/__init__.py run alone (it imports nothing at module level): __version__, __url__
#: and docs_url() without importing the package or its dependencies
PACKAGE = runpy.run_path(str(HERE / "flake8_xla" / "__init__.py"))
#: an inline markdown link or image: [text](target) / ![alt](target "title")
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
ABSOLUTE = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def absolute_links(markdown: str, docs_url=PACKAGE["docs_url"]) -> str:
    """``markdown`` (README.md's text) with each relative link made absolute: a path becomes
    the file in the release's tree (``docs_url(path)``). Links with a scheme (``https:``,
    ``mailto:``) and in-page anchors (``#install``) are kept; code (fenced or inline) is not
    touched."""

    def fix(match: re.Match) -> str:
        target = match.group(2)
        if ABSOLUTE.match(target) or target.startswith(("//", "#")):
            return match.group(0)
        return match.group(1) + docs_url(target.removeprefix("./")) + match.group(3)

    pieces = re.split(r"(^```.*?^```|`[^`\n]+`)", markdown, flags=re.S | re.M)
    return "".join(piece if piece.startswith("`") else LINK.sub(fix, piece) for piece in pieces)


def project_urls(url: str = PACKAGE["__url__"], docs_url=PACKAGE["docs_url"]) -> dict:
    """The index page's links: the docs and the changelog of this release (at its tag)."""
    return {
        "Homepage": url,
        "Documentation": docs_url("docs/index.md"),
        "Changelog": docs_url("CHANGELOG.md"),
        "Issues": f"{url}/issues",
        "Source": url,
    }


if __name__ == "__main__":
    from setuptools import setup

    setup(
        url=PACKAGE["__url__"],
        project_urls=project_urls(),
        long_description=absolute_links((HERE / "README.md").read_text(encoding="utf-8")),
        long_description_content_type="text/markdown",
    )
