"""benchlib.token_rate.ReplyChecker: every pipelined reply is checked (id, token), across reads."""
import io

from benchlib.token_rate import ReplyChecker


def reply(rid, body=b'"result":{"accessToken":"ey.x","fromCache":true}}'):
    return b'{"jsonrpc":"2.0","id":%s,' % rid + body + b"\n"


class Trickle(io.RawIOBase):
    """A pipe that hands out at most `step` bytes per read (replies split across reads)."""

    def __init__(self, data: bytes, step: int):
        self.data, self.step = data, step

    def readable(self):
        return True

    def readinto(self, b):
        n = min(self.step, len(b), len(self.data))
        b[:n] = self.data[:n]
        self.data = self.data[n:]
        return n


def check(data: bytes, count: int, step: int = 7) -> ReplyChecker:
    checker = ReplyChecker(count)
    f = Trickle(data, step)
    while checker.read_from(f):
        pass
    return checker


def test_good_replies_split_across_reads_all_count():
    data = b"".join(reply(str(i).encode() + b"") for i in (3, 0, 2, 1))
    for step in (1, 7, 50, 1 << 20):
        c = check(data, 4, step)
        assert (c.replies, c.errors, c.kept) == (4, 0, 0), step
        assert bytes(c.seen) == b"\x01" * 4


def test_each_kind_of_bad_reply_counts():
    data = (reply(b"0")
            + reply(b"0")                                       # the same id again
            + reply(b"9")                                       # no such request
            + reply(b"-1") + reply(b'"1"')                      # not a request's id
            + reply(b"1", b'"error":{"code":-32000,"message":"no"}}')
            + reply(b"2", b'"result":{"account":{}}}')          # no token
            + b'{"jsonrpc":"2.0","method":"deviceCode","params":{}}\n'
            + reply(b"3"))
    c = check(data, 4)
    assert (c.replies, c.errors) == (9, 7)
    assert bytes(c.seen) == b"\x01\x00\x00\x01"
    assert c.bad[0] == reply(b"0")[:-1]
