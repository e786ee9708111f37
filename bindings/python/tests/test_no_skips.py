"""A missing test prerequisite fails the suite instead of skipping (conftest.py)."""

from pathlib import Path

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()


def test_a_skipped_test_fails(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_inner="""
        import pytest

        def test_needs_a_missing_module():
            pytest.importorskip("tdbfilter_no_such_module")

        @pytest.mark.skip(reason="not here")
        def test_marked_skip():
            pass

        def test_fine():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    # The skip inside a test fails the test, the skip marker fails its setup.
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*a skip is a failure in this suite*"])
    assert result.ret != 0


def test_a_module_skipped_at_import_fails(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_module_level="""
        import pytest

        pytest.importorskip("tdbfilter_no_such_module")

        def test_never_run():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*a skip is a failure in this suite*"])
    assert result.ret != 0
