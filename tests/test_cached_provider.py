from conftest import run
from harness.core.messages import Transcript
from harness.providers.cached import CachedProvider
from workbook.providers.offline import OfflineModel


class Counting(OfflineModel):
    calls = 0

    async def complete(self, **kw):
        Counting.calls += 1
        return await super().complete(**kw)


def test_second_run_is_served_from_the_file(tmp_path, small_tools):
    path = tmp_path / "cache.jsonl"
    t = Transcript()
    t.add_user("Read the file 'a.txt'")
    first = run(CachedProvider(Counting(), path).complete(system="s", transcript=t, tools=small_tools))
    again = CachedProvider(Counting(), path)
    second = run(again.complete(system="s", transcript=t, tools=small_tools))
    assert Counting.calls == 1 and again.hits == 1
    assert second.message.to_api() == first.message.to_api() and second.usage == first.usage
    run(again.complete(system="other", transcript=t, tools=small_tools))
    assert Counting.calls == 2 and len(path.read_text().splitlines()) == 2
