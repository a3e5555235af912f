"""Shared, deterministic text material for the bench generators.

A pool is one long *unescaped* Python str (ASCII prose, some CJK, newlines, quotes, tabs,
backslashes). Generators take slices of it and JSON-escape them with json.dumps (C speed),
so a slice can never cut an escape sequence in half.
"""

import json
import random

WORDS = (
    "the of and to in is for on with that by this from at as are be it an or file line "
    "error warning request result tool server client session token stream buffer query "
    "index table column value schema record batch offset length count match path config "
    "build deploy commit branch merge test passed failed timeout retry cache memory disk "
    "network latency throughput parser decoder encoder frame message payload header body "
    "function return struct impl trait async await future poll spawn thread mutex channel"
).split()

CJK = (
    "数据库连接超时请稍后重试文件已成功上传服务器返回错误代码用户权限不足无法访问该资源"
    "検索結果が見つかりませんでした設定ファイルを読み込めません処理が完了しました"
    "요청이처리되었습니다네트워크오류가발생했습니다"
)

# Things that must be escaped in JSON strings, plus some non-ASCII that need not be.
SPECIALS = ['\n', '\n', '\n', '"', '\t', '\\', '"quoted"', 'C:\\Users\\dev\\file.txt',
            '\n\n', 'café', 'naïve', '→', '✓', '\u00e9', '{"nested": "json"}', '\r\n', '€']


def make_pool(rng: random.Random, n_chars: int, cjk_ratio: float = 0.03,
              special_ratio: float = 0.04) -> str:
    """About n_chars characters of mixed prose, built from chunks so it stays fast."""
    parts = []
    total = 0
    words = WORDS
    ncjk = len(CJK)
    while total < n_chars:
        r = rng.random()
        if r < cjk_ratio:
            a = rng.randrange(ncjk - 40)
            s = CJK[a:a + rng.randint(5, 40)]
        elif r < cjk_ratio + special_ratio:
            s = rng.choice(SPECIALS)
        else:
            s = " ".join(rng.choices(words, k=rng.randint(4, 16))) + rng.choice((". ", ", ", " ", ".\n"))
        parts.append(s)
        total += len(s)
    return "".join(parts)


def esc(s: str) -> bytes:
    """JSON string literal (with quotes), UTF-8, non-ASCII kept raw."""
    return json.dumps(s, ensure_ascii=False).encode("utf-8")


class Slicer:
    """Random slices of a pool, by character count."""

    def __init__(self, rng: random.Random, pool: str):
        self.rng = rng
        self.pool = pool
        self.n = len(pool)

    def take(self, n_chars: int) -> str:
        n_chars = min(n_chars, self.n)
        a = self.rng.randrange(self.n - n_chars + 1)
        return self.pool[a:a + n_chars]

    def take_json(self, n_chars: int) -> bytes:
        return esc(self.take(n_chars))
