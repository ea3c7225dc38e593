-- Runs first.  The regression tests run as an ordinary role, as
-- applications do: from the next file on, every session of this database
-- starts as regress_widecol (session_user is still the superuser that
-- pg_regress connects as, so the few steps that need one say SET ROLE NONE
-- and RESET ROLE around them).
CREATE ROLE regress_widecol LOGIN;
GRANT CREATE ON SCHEMA public TO regress_widecol;
SELECT format('GRANT CREATE ON DATABASE %I TO regress_widecol', current_database()) \gexec
SELECT format('ALTER DATABASE %I SET role = regress_widecol', current_database()) \gexec
SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles WHERE rolname = 'regress_widecol';
