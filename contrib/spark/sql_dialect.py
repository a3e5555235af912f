"""The one place rule SQL is respelled for an engine: a table of spellings, and `to_spark`.

The rule files (queries/*.sql) are written once, in the SQL that polars SQL (mcpsift's own
engine, polars 0.55) and DuckDB accept. Spark SQL accepts all of it but one function, so the
Spark job runs every rule through `to_spark` and nothing else is changed.

Spellings of the exact, linear-interpolated quantile of `x` at `q` (R-7 / Excel PERCENTILE.INC,
`x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)])` with `h = (n - 1) * q`), tried on
polars SQL 0.55 (`mcpsift query`), DuckDB 2.0.1 and Spark SQL 4.3.0
(test_sql_dialect.py checks every cell marked yes and no that it can reach):

| spelling                                        | polars SQL | DuckDB | Spark SQL |
|-------------------------------------------------|------------|--------|-----------|
| QUANTILE_CONT(x, q)                             | yes        | yes    | no        |
| PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)    | no         | yes    | yes       |
| percentile(x, q)                                | no         | no     | yes       |
| PERCENTILE_CONT(x, q)                           | no         | no     | no        |
| QUANTILE(x, q)                                  | no         | yes*   | no        |
| MEDIAN(x)  (q = 0.5 only)                       | yes        | yes    | yes       |

(* DuckDB's QUANTILE is QUANTILE_DISC, another definition.) No spelling of a quantile other
than the median is accepted by all three, so the rules keep QUANTILE_CONT(x, q) and the Spark
job renames it to Spark's percentile(x, q): same arguments, same definition, same numbers.
The rename touches code only: never a quoted string, a quoted identifier or a comment.
"""

import re

# (name in the rule files, Spark SQL's name for the same function with the same arguments).
# Matched case-insensitively as a function name (a word followed by an opening parenthesis).
SPARK_RENAMES = [
    ("QUANTILE_CONT", "percentile"),
]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _code_spans(sql):
    """Yields (is_code, text) pieces of `sql`: string literals, quoted identifiers and comments
    are not code."""
    i, n, start = 0, len(sql), 0
    while i < n:
        c = sql[i]
        end = None
        if c in "'\"`":
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:  # doubled quote inside
                        j += 2
                        continue
                    break
                j += 1
            end = min(j + 1, n)
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            end = n if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            end = n if j < 0 else j + 2
        if end is None:
            i += 1
            continue
        if i > start:
            yield True, sql[start:i]
        yield False, sql[i:end]
        i = start = end
    if start < n:
        yield True, sql[start:]


def _rename_code(code, renames):
    out, pos = [], 0
    for m in _WORD.finditer(code):
        word = m.group(0)
        new = renames.get(word.upper())
        if new is None:
            continue
        rest = code[m.end():].lstrip()
        if not rest.startswith("("):
            continue
        out.append(code[pos:m.start()])
        out.append(new)
        pos = m.end()
    out.append(code[pos:])
    return "".join(out)


def to_spark(sql):
    """A rule file's SQL as Spark SQL: SPARK_RENAMES applied to function calls, nothing else."""
    renames = {a.upper(): b for a, b in SPARK_RENAMES}
    return "".join(_rename_code(text, renames) if code else text for code, text in _code_spans(sql))
