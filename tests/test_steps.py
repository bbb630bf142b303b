"""The one quoted-value pattern and step splitter (workbook.steps)."""
from workbook.demo import demo_tools, load_demo_queries
from workbook.providers.offline_args import fill_arguments
from workbook.steps import quoted_values, split_steps


def test_an_apostrophe_is_not_a_quote():
    """demo-051: "what's queued, described as '…'" once quoted "s queued, described as " instead of the message."""
    q = next(q for q in load_demo_queries() if q.qid == "demo-051")
    assert quoted_values(q.query) == [q.args["message"]]
    assert quoted_values("What's in the project? I'd like a listing") == []
    assert quoted_values("Remind me to pay it: 'Pay Dana's invoice'.") == ["Pay Dana's invoice"]
    assert quoted_values("tell #dev it's fixed, then post 'done'") == ["done"]


def test_quotes_still_work_in_every_form():
    assert quoted_values("""Read 'a.txt', "b c", `d`, “e” and ‘f’""") == ["a.txt", "b c", "d", "e", "f"]
    assert split_steps("Read 'a, then b.txt', then post it") == ["Read 'a, then b.txt'", "post it"]


def test_the_stand_ins_arguments_take_the_quoted_message():
    q = next(q for q in load_demo_queries() if q.qid == "demo-051")
    commit = next(t for t in demo_tools() if t.name == "git_commit")
    assert fill_arguments(q.query, commit.input_schema)["message"] == q.args["message"]
