"""prefbuild.secrets: registered values and URL passwords are masked wherever text is written."""

from __future__ import annotations

from prefbuild import secrets


def test_registered_values_and_their_url_encoded_forms_are_masked():
    secrets.register("tok/with spaces+1", None, "", "ab")  # None, empty and short values are ignored
    assert {"tok/with spaces+1", "tok%2Fwith%20spaces%2B1"} <= secrets.registered()
    assert "ab" not in secrets.registered()
    text = "sent tok/with spaces+1 as ?key=tok%2Fwith%20spaces%2B1; tab stays"
    assert secrets.mask(text) == "sent *** as ?key=***; tab stays"


def test_longest_secret_wins_and_explicit_lists_ignore_the_registry():
    assert secrets.mask("abcdefgh and abcd", ["abcd", "abcdefgh"]) == "*** and ***"
    secrets.register("registry-only-999")
    assert secrets.mask("registry-only-999", []) == "registry-only-999"


def test_url_passwords_are_masked_whatever_their_length():
    assert secrets.mask("POST http://u:pw@h:1/v1 and https://x:y@z/") == "POST http://u:***@h:1/v1 and https://x:***@z/"
    assert secrets.mask_url("http://user@host/v1") == "http://user@host/v1"
    assert secrets.split_userinfo("http://bob:p%40ss@[::1]:8000/v1") == ("http://[::1]:8000/v1", "bob", "p@ss")
    assert "p@ss" in secrets.registered()


def test_mask_data_walks_nested_json():
    data = {"teacher": {"extra_body": {"api_key": "zzz-secret-1"}, "urls": ["http://a:zzz-secret-1@h"]}, "n": 3}
    masked = secrets.mask_data(data, ["zzz-secret-1"])
    assert masked == {"teacher": {"extra_body": {"api_key": "***"}, "urls": ["http://a:***@h"]}, "n": 3}
    assert data["teacher"]["extra_body"]["api_key"] == "zzz-secret-1"  # the input is not changed
