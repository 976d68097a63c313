"""An edit's refusal in the guard (SPEC "Context budget", "Waiting for a lane"): who holds
what, the three ways on, at most 600 characters, ending with the next step."""

from __future__ import annotations

from agentlanes.hooks.guard import REFUSAL_MAX_CHARS, refusal

HOLDER = [{"agent_name": "alice", "session_id": "s1"}]


def test_a_refusal_names_the_three_ways_on_and_ends_with_the_next_step() -> None:
    text = refusal(["agentlanes: src/app.py is claimed by alice"], HOLDER,
                   ["/repo/src/app.py"], "/repo", "bob")  # fmt: skip
    assert text.startswith("agentlanes: src/app.py is claimed by alice\n")
    assert "lanes wait src/app.py" in text and "lanes ask alice src/app.py" in text
    assert "work on other files" in text and "(you are bob)" in text
    assert text.endswith("Next step: lanes wait src/app.py")


def test_a_long_refusal_is_cut_in_what_it_explains_not_in_the_ways_on() -> None:
    why = [f"agentlanes: src/{'x' * 70}{i}.py is claimed by alice" for i in range(40)]
    text = refusal(why, HOLDER * 5, [f"/repo/src/{'y' * 200}.py", "/repo/a b.py"], "/repo", "b")
    assert len(text) <= REFUSAL_MAX_CHARS
    assert "…" in text and text.startswith("agentlanes: src/xxx")
    assert text.endswith("Next step: lanes wait src/" + "y" * 76 + " 'a b.py'"), text
