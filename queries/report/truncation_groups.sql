-- truncation_groups: tool results per tool x client name x client version, for the report's
-- truncation table (every group, for scale; the truncation_rates rule lists only groups with
-- something lost). Not a rule: files under queries/report/ are the report's own queries.
SELECT COALESCE(tool, '?') AS tool, COALESCE(client_name, '?') AS client_name,
    COALESCE(client_version, '?') AS client_version, COUNT(*) AS calls,
    SUM(CASE WHEN truncated THEN 1 ELSE 0 END) AS truncated,
    SUM(CASE WHEN outcome = 'no_response' THEN 1 ELSE 0 END) AS lost,
    SUM(CASE WHEN outcome = 'cancelled' THEN 1 ELSE 0 END) AS cancelled,
    MAX(COALESCE(resp_bytes, 0)) AS max_resp_bytes
FROM calls WHERE method = 'tools/call' GROUP BY COALESCE(tool, '?'), COALESCE(client_name, '?'), COALESCE(client_version, '?')
