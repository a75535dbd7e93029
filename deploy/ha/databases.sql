-- The services' databases on the cluster's primary, for the drills
-- (scripts/ha-cluster.sh up) and the compose ha profile's ha-init alike,
-- run with psql as postgres: the role tickerdesk (the compose stack's
-- throwaway local credentials) owning notes and marketdata. Safe to run
-- again: what exists is left alone. CREATE DATABASE cannot run in a
-- transaction block or a function, hence \gexec.
SELECT 'CREATE ROLE tickerdesk LOGIN PASSWORD ''tickerdesk'''
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tickerdesk')
\gexec
SELECT format('CREATE DATABASE %I OWNER tickerdesk', d)
FROM unnest(ARRAY['notes', 'marketdata']) AS d
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = d)
\gexec
