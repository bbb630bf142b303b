"""Package-index tools: what a package is, its releases, dependencies and advisories.

Introduced in Chapter 1 as part of the demo world.

The index is ``DemoWorld.packages``, a dozen invented packages held in memory, so answers
never depend on a live registry. ``package_info`` and ``package_versions`` overlap on
purpose: both talk about versions, and only one lists them all.
"""
from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from harness.core.text import tokenize
from harness.core.tools import Tool, tool
from harness.core.json_types import JSONObject

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "packages"


def make_tools(world: DemoWorld) -> list[Tool]:
    def find(package: str) -> JSONObject:
        name = package.strip().lower()
        if name not in world.packages:
            close = difflib.get_close_matches(name, list(world.packages), n=1)
            raise ValueError(f"No package {package!r} in the index{f'; did you mean {close[0]!r}' if close else ''}.")
        return world.packages[name]

    def latest(pkg: JSONObject) -> JSONObject:
        return [r for r in pkg["releases"] if not r["yanked"]][-1]

    def release(pkg: JSONObject, package: str, version: str | None) -> JSONObject:
        if version is None:
            return latest(pkg)
        for r in pkg["releases"]:
            if r["version"] == version.strip().lstrip("v"):
                return r
        raise ValueError(f"{package} has no release {version!r}; releases: {', '.join(r['version'] for r in pkg['releases'])}.")

    @tool(domain=DOMAIN, tags={"network", "read"})
    def package_info(package: str) -> dict[str, str]:
        """Get a package's overview from the package index: latest version, license, homepage and a one-line summary.

        Args:
            package: Package name, e.g. 'quickcsv'.
        """
        pkg = find(package)
        return {"package": package.strip().lower(), "latest": latest(pkg)["version"], "license": pkg["license"],
                "homepage": pkg["homepage"], "summary": pkg["summary"]}

    @tool(domain=DOMAIN, tags={"network", "read"})
    def package_versions(package: str) -> list[str]:
        """List every published version of a package with its release date, newest first, marking yanked releases.

        Args:
            package: Package name.
        """
        return [f"{r['version']} ({r['date']}){' yanked' if r['yanked'] else ''}" for r in reversed(find(package)["releases"])]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def package_dependencies(package: str, version: str | None = None) -> dict[str, str]:
        """List the packages that a package requires, with their version constraints, for its latest release or a given version.

        Args:
            package: Package name.
            version: A specific release; the latest when omitted.
        """
        r = release(find(package), package, version)
        return dict(r["requires"]) or {"(none)": f"{package} {r['version']} has no dependencies"}

    @tool(domain=DOMAIN, tags={"network", "read"})
    def package_dependents(package: str) -> list[str]:
        """List the packages in the index that depend on a given package (its reverse dependencies).

        Args:
            package: Package name.
        """
        find(package)
        name = package.strip().lower()
        users = [f"{n} {latest(p)['version']} requires {name}{latest(p)['requires'][name]}"
                 for n, p in sorted(world.packages.items()) if name in latest(p)["requires"]]
        return users or [f"No package in the index depends on {name}."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def search_packages(query: str, limit: int = 10) -> list[str]:
        """Search the package index by keyword across package names and summaries; returns names, latest versions and summaries.

        Args:
            query: Keywords to look for.
            limit: Maximum number of packages to return.
        """
        terms = set(tokenize(query))
        scored = sorted((-len(terms & set(tokenize(f"{n} {p['summary']}"))), n) for n, p in world.packages.items())
        hits = [f"{n} {latest(world.packages[n])['version']}: {world.packages[n]['summary']}" for s, n in scored if s < 0]
        return hits[:limit] or [f"No package matches {query!r}."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def package_advisories(package: str, version: str | None = None) -> list[dict[str, object]] | str:
        """List known security advisories for a package, or only those affecting one version, with severity and affected versions.

        Args:
            package: Package name.
            version: Only advisories affecting this release.
        """
        pkg = find(package)
        if version is not None:
            version = release(pkg, package, version)["version"]
        found = [a for a in pkg.get("advisories", []) if version is None or version in a["affected"]]
        return found or f"No known advisories for {package}{f' {version}' if version else ''}."

    return [package_info, package_versions, package_dependencies, package_dependents, search_packages,
            package_advisories]
