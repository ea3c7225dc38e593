--
-- differential: random statements applied to a widecol table and to an
-- equivalent heap table, comparing full contents after every batch.
--
-- Shapes:
--   A  (pk int, ck int, v text, n int)                 partition 'pk', clustering 'ck'
--   B  (pk text COLLATE "C", ck bigint, v text, n int) partition 'pk', clustering 'ck DESC'
--   C  (a int, b text)                                 no key (bag semantics)
--
-- The reference tables are heap tables with PRIMARY KEY (pk, ck) (A, B) or no
-- key (C).  Upsert semantics are emulated on the reference side with
-- INSERT ... ON CONFLICT, last-occurrence-wins deduplication of multi-row
-- inserts and COPY batches, and delete-then-update for key-changing UPDATEs.
--
-- All randomness is drawn up front by widecol_diff_script() after setseed(),
-- and every generated statement carries only literals, so both sides see the
-- same statements and the output is deterministic.
--
-- Running by hand:  psql -X -q -v am=widecol -f sql/differential.sql
-- (the server needs shared_preload_libraries = 'widecol').  With -v am=heap
-- the test logic is exercised without widecol: the "subject" table is then a
-- heap table whose upsert semantics are emulated by a trigger, widecol options
-- and widecol.flush() calls are left out, and the key-order check is skipped.
--
-- On failure psql stops at the first error (ON_ERROR_STOP).  The failing
-- statement is printed; every statement starts with a /* seed N shape X
-- step M */ tag, and the full statement list for a run can be listed with
--   SELECT * FROM widecol_diff_script('widecol', '{N}', <steps A/B>, <steps C>);
--
\if :{?am}
\else
\set am widecol
\endif
SELECT :'am' = 'widecol' AS wdiff_need_ext \gset
\if :wdiff_need_ext
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol;
RESET client_min_messages;
\endif
SET synchronous_commit = off;
SET max_parallel_workers_per_gather = 0;
-- smallest level 0 (kB) so that flushes into sorted runs happen during the
-- test; the generated script varies it per seed.
SET widecol.level0_max_size = 16;

-- random integer in [lo, hi]
CREATE FUNCTION widecol_diff_rand(lo int, hi int) RETURNS int
LANGUAGE sql VOLATILE AS $$ SELECT lo + floor(random() * (hi - lo + 1))::int $$;

-- key literals.  Shape A: pk k in -3..4, ck k in -10..10.
-- Shape B: pk k in 1..8 (strings chosen to exercise byte order: prefixes,
-- upper case before lower case, a space, a multi-byte character), ck k in
-- -9..9 mapped monotonically to bigints beyond the int4 range, with the
-- bigint extremes at both ends.  Shape C: a in 0..9.
CREATE FUNCTION widecol_diff_pk(shape text, k int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE shape
    WHEN 'B' THEN quote_literal((ARRAY['a', 'ab', 'a b', 'abc', 'B', 'Z', 'zz', 'é'])[k]) || '::text'
    ELSE quote_literal(k::text) || '::int' END $$;

CREATE FUNCTION widecol_diff_ck(shape text, k int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE shape
    WHEN 'B' THEN quote_literal(CASE k WHEN -9 THEN '-9223372036854775808'
                                       WHEN 9 THEN '9223372036854775807'
                                       ELSE (k::bigint * 1000000007)::text END) || '::bigint'
    ELSE quote_literal(k::text) || '::int' END $$;

-- literal for a v / b text value: mostly short, sometimes NULL, empty,
-- CSV-hostile, or long (up to ~2 kB).
CREATE FUNCTION widecol_diff_val() RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r float8 := random();
BEGIN
  IF r < 0.08 THEN
    RETURN 'NULL::text';
  ELSIF r < 0.12 THEN
    RETURN quote_literal('');
  ELSIF r < 0.17 THEN
    RETURN quote_literal((ARRAY['a,b', 'q"u''ote', E'line\nbreak', E'back\\slash',
                                E'tab\tx', ' lead', 'NULL', E'\\N', 'ü'])[widecol_diff_rand(1, 9)]);
  ELSIF r < 0.20 THEN
    RETURN quote_literal((SELECT string_agg(md5((b + i)::text), '')
                            FROM widecol_diff_rand(0, 100000) b,
                                 generate_series(1, widecol_diff_rand(8, 60)) i));
  ELSE
    RETURN quote_literal('v' || widecol_diff_rand(0, 99999));
  END IF;
END $$;

-- literal for an n value (int or NULL)
CREATE FUNCTION widecol_diff_num() RETURNS text
LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN random() < 0.1 THEN 'NULL::int'
              ELSE quote_literal(widecol_diff_rand(-50, 1000)::text) || '::int' END $$;

-- literal for shape C's b column: small pool so that duplicates are common
CREATE FUNCTION widecol_diff_bval() RETURNS text
LANGUAGE sql VOLATILE AS $$
  SELECT CASE WHEN random() < 0.15 THEN 'NULL::text'
              ELSE quote_literal((ARRAY['', 'b1', 'b2', 'b3', 'b4', 'b,5'])[widecol_diff_rand(1, 6)]) END $$;

-- a batch of rows for multi-row INSERT / COPY.  src is a subquery with
-- columns (ord, <table columns>); vals is a plain VALUES row list (without
-- ord) when the batch consists of literal rows, otherwise NULL.  Key
-- duplicates inside a batch are frequent on purpose.
CREATE FUNCTION widecol_diff_batch(shape text, nmax int, OUT src text, OUT vals text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  nrows int := widecol_diff_rand(2, nmax);
  rows_o text[] := '{}';
  rows_p text[] := '{}';
  row_t text;
  m int := widecol_diff_rand(1, 30);
  p0 int;
  vexpr text;
  i int;
BEGIN
  IF random() < 0.5 THEN
    FOR i IN 1..nrows LOOP
      IF shape = 'C' THEN
        row_t := format('%s, %s', quote_literal(widecol_diff_rand(0, 9)::text) || '::int',
                        widecol_diff_bval());
      ELSIF shape = 'A' THEN
        row_t := format('%s, %s, %s, %s', widecol_diff_pk('A', widecol_diff_rand(-3, 4)),
                        widecol_diff_ck('A', widecol_diff_rand(-10, 10)),
                        widecol_diff_val(), widecol_diff_num());
      ELSE
        row_t := format('%s, %s, %s, %s', widecol_diff_pk('B', widecol_diff_rand(1, 8)),
                        widecol_diff_ck('B', widecol_diff_rand(-9, 9)),
                        widecol_diff_val(), widecol_diff_num());
      END IF;
      rows_o := rows_o || format('(%s, %s)', i, row_t);
      rows_p := rows_p || format('(%s)', row_t);
    END LOOP;
    src := format('(VALUES %s) AS s(ord, %s)', array_to_string(rows_o, ', '),
                  CASE shape WHEN 'C' THEN 'a, b' ELSE 'pk, ck, v, n' END);
    vals := array_to_string(rows_p, ', ');
  ELSE
    vexpr := (ARRAY[format('''gs%s_'' || g', m),
                    format('CASE WHEN g %% 4 = 0 THEN NULL ELSE md5((g + %s)::text) END', m),
                    format('repeat(md5(g::text), %s)', widecol_diff_rand(1, 40))])[widecol_diff_rand(1, 3)];
    IF shape = 'C' THEN
      src := format('(SELECT g AS ord, (g * %s) %% 10 AS a, '
                    'CASE WHEN g %% 4 = 0 THEN NULL ELSE ''b'' || (g %% 3) END AS b '
                    'FROM generate_series(1, %s) g) AS s', m, nrows);
    ELSIF shape = 'A' THEN
      p0 := widecol_diff_rand(-3, 4);
      src := format('(SELECT g AS ord, %s + g %% %s AS pk, (g * %s) %% 21 - 10 AS ck, '
                    '%s AS v, g * %s AS n FROM generate_series(1, %s) g) AS s',
                    p0, widecol_diff_rand(1, 3), m, vexpr, m, nrows);
    ELSE
      p0 := widecol_diff_rand(0, 7);
      src := format('(SELECT g AS ord, '
                    '(ARRAY[''a'', ''ab'', ''a b'', ''abc'', ''B'', ''Z'', ''zz'', ''é''])[1 + (%s + g %% %s) %% 8] AS pk, '
                    '((g * %s) %% 17 - 8)::bigint * 1000000007 AS ck, '
                    '%s AS v, g * %s AS n FROM generate_series(1, %s) g) AS s',
                    p0, widecol_diff_rand(1, 3), m, vexpr, m, nrows);
    END IF;
    vals := NULL;
  END IF;
END $$;

-- SET clause for an UPDATE of non-key columns (shapes A and B)
CREATE FUNCTION widecol_diff_setc() RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r float8 := random();
BEGIN
  IF r < 0.35 THEN
    RETURN 'v = ' || widecol_diff_val();
  ELSIF r < 0.55 THEN
    RETURN format('n = (coalesce(n, 0) * 3 + %s) %% 100003', widecol_diff_rand(1, 99));
  ELSIF r < 0.70 THEN
    RETURN format('v = %s, n = %s', widecol_diff_val(), widecol_diff_num());
  ELSIF r < 0.85 THEN
    RETURN format('v = substr(v, 1, 40) || %L', 'u' || widecol_diff_rand(0, 99));
  ELSE
    RETURN 'n = NULL, v = reverse(v)';
  END IF;
END $$;

-- Heap-mode emulation of widecol's upsert semantics for the subject table:
-- an INSERT replaces the row with the same key (earlier rows of the same
-- statement / COPY are visible to the trigger, so the later one wins), a
-- key-changing UPDATE overwrites the row at the new key.
CREATE FUNCTION widecol_diff_emulate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format('DELETE FROM %I.%I WHERE pk = $1 AND ck = $2', TG_TABLE_SCHEMA, TG_TABLE_NAME)
      USING NEW.pk, NEW.ck;
  ELSIF NEW.pk IS DISTINCT FROM OLD.pk OR NEW.ck IS DISTINCT FROM OLD.ck THEN
    EXECUTE format('DELETE FROM %I.%I WHERE pk = $1 AND ck = $2', TG_TABLE_SCHEMA, TG_TABLE_NAME)
      USING NEW.pk, NEW.ck;
  END IF;
  RETURN NEW;
END $$;

-- widecol.flush() for widecol tables, no-op for anything else
CREATE PROCEDURE widecol_diff_flush(rel regclass)
LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
       WHERE c.oid = rel) = 'widecol' THEN
    EXECUTE 'SELECT widecol.flush($1)' USING rel;
  END IF;
END $$;

-- Compare subject and reference: multiset equality (EXCEPT ALL both ways)
-- and, when key_order is given, that a plain seq scan of the subject returns
-- rows in key order.  With summary, report one line.
CREATE PROCEDURE widecol_diff_check(sub regclass, ref regclass, label text, step int,
                                    key_cols text, key_order text, summary text DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
  n_sub bigint;
  n_ref bigint;
  s_sub text[];
  s_ref text[];
  a_sub text[];
  a_ref text[];
  i int;
  nrows bigint;
BEGIN
  EXECUTE format('SELECT count(*), (array_agg(x::text))[1:5] FROM '
                 '(SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) x', sub, ref)
    INTO n_sub, s_sub;
  EXECUTE format('SELECT count(*), (array_agg(x::text))[1:5] FROM '
                 '(SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) x', ref, sub)
    INTO n_ref, s_ref;
  IF n_sub > 0 OR n_ref > 0 THEN
    RAISE EXCEPTION 'differential mismatch: %, after step %: % row(s) only in %, % row(s) only in %',
                    label, step, n_sub, sub, n_ref, ref
      USING DETAIL = format('only in %s (up to 5): %s; only in %s (up to 5): %s',
                            sub, coalesce(s_sub::text, '{}'), ref, coalesce(s_ref::text, '{}')),
            HINT = 'generated statements are tagged /* ' || label || ' step N */';
  END IF;
  IF key_order IS NOT NULL THEN
    EXECUTE format('SELECT coalesce(array_agg(ROW(%s)::text), ''{}'') FROM %s', key_cols, sub)
      INTO a_sub;
    EXECUTE format('SELECT coalesce(array_agg(ROW(%s)::text ORDER BY %s), ''{}'') FROM %s',
                   key_cols, key_order, ref)
      INTO a_ref;
    IF a_sub IS DISTINCT FROM a_ref THEN
      i := 1;
      WHILE i <= cardinality(a_sub) AND a_sub[i] IS NOT DISTINCT FROM a_ref[i] LOOP
        i := i + 1;
      END LOOP;
      RAISE EXCEPTION 'differential order mismatch: %, after step %: seq scan of % is not in key order (%), first difference at row % of %',
                      label, step, sub, key_order, i, cardinality(a_sub)
        USING DETAIL = format('seq scan rows %s..%s: %s; expected: %s',
                              greatest(i - 2, 1), i + 2,
                              a_sub[greatest(i - 2, 1):i + 2], a_ref[greatest(i - 2, 1):i + 2]),
              HINT = 'generated statements are tagged /* ' || label || ' step N */';
    END IF;
  END IF;
  IF summary IS NOT NULL THEN
    EXECUTE format('SELECT count(*) FROM %s', sub) INTO nrows;
    RAISE NOTICE '%: %, % rows, ok', label, summary, nrows;
  END IF;
END $$;

-- a key (p, c) for a single-row statement: with probability recent (if
-- there is one) a recently written key from rk_p/rk_c, else a random key in
-- the shape's ranges
CREATE FUNCTION widecol_diff_key(rk_p int[], rk_c int[], recent float8,
                                 pmin int, pmax int, cmin int, cmax int,
                                 OUT p int, OUT c int)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE i int;
BEGIN
  IF cardinality(rk_p) > 0 AND random() < recent THEN
    i := widecol_diff_rand(1, cardinality(rk_p));
    p := rk_p[i]; c := rk_c[i];
  ELSE
    p := widecol_diff_rand(pmin, pmax); c := widecol_diff_rand(cmin, cmax);
  END IF;
END $$;

-- The statement generator.  For every seed and shape: create the subject
-- table (USING am) and the reference heap table, run nsteps random steps
-- (one subject statement each, plus the reference statements and random
-- transaction control), check every batch steps, drop both tables.
CREATE FUNCTION widecol_diff_script(am text, seeds int[], steps_ab int, steps_c int,
                                    batch int DEFAULT 50)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  is_heap boolean := (am = 'heap');
  csv text := format('/tmp/widecol_diff_%s.csv', pg_backend_pid());
  seed int;
  shape text;
  tbl text;
  ref text;
  label text;
  pfx text;
  nsteps int;
  step int;
  checks int;
  in_xact boolean;
  depth int;
  r float8;
  pmin int; pmax int; cmin int; cmax int;
  key_cols text;
  key_order text;
  upsert text;
  rk_p int[];
  rk_c int[];
  p int; c int; p2 int; c2 int; lo int; hi int;
  b record;
  setc text;
  whr text;
  cols text;
BEGIN
  FOREACH seed IN ARRAY seeds LOOP
    FOREACH shape IN ARRAY ARRAY['A', 'B', 'C'] LOOP
      PERFORM setseed((seed * 10 + ascii(shape) - 64) / 1000.0);
      tbl := 'wdiff_' || lower(shape);
      ref := tbl || '_ref';
      label := format('seed %s shape %s', seed, shape);
      nsteps := CASE shape WHEN 'C' THEN steps_c ELSE steps_ab END;
      checks := 0;
      in_xact := false;
      depth := 0;
      rk_p := '{}';
      rk_c := '{}';
      IF shape = 'A' THEN
        pmin := -3; pmax := 4; cmin := -10; cmax := 10;
        cols := 'pk int, ck int, v text, n int';
        key_order := 'pk, ck';
      ELSIF shape = 'B' THEN
        pmin := 1; pmax := 8; cmin := -9; cmax := 9;
        cols := 'pk text COLLATE "C", ck bigint, v text, n int';
        key_order := 'pk COLLATE "C", ck DESC';
      ELSE
        pmin := 0; pmax := 9; cmin := NULL; cmax := NULL;
        cols := 'a int, b text';
        key_order := NULL;
      END IF;
      key_cols := 'pk, ck';
      IF is_heap THEN
        key_order := NULL;
      END IF;
      upsert := ' ON CONFLICT (pk, ck) DO UPDATE SET v = EXCLUDED.v, n = EXCLUDED.n';

      RETURN NEXT format('SET widecol.level0_max_size = %s',
                         (ARRAY[16, 1024, 32])[1 + seed % 3]);
      IF is_heap THEN
        RETURN NEXT format('CREATE TABLE %I (%s) USING heap', tbl, cols);
        IF shape <> 'C' THEN
          RETURN NEXT format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I '
                             'FOR EACH ROW EXECUTE FUNCTION widecol_diff_emulate()',
                             tbl || '_emulate', tbl);
        END IF;
      ELSIF shape = 'A' THEN
        RETURN NEXT format('CREATE TABLE %I (%s) USING %I WITH '
                           '(widecol.partition_key = ''pk'', widecol.clustering_key = ''ck'')',
                           tbl, cols, am);
      ELSIF shape = 'B' THEN
        RETURN NEXT format('CREATE TABLE %I (%s) USING %I WITH '
                           '(widecol.partition_key = ''pk'', widecol.clustering_key = ''ck DESC'')',
                           tbl, cols, am);
      ELSE
        RETURN NEXT format('CREATE TABLE %I (%s) USING %I', tbl, cols, am);
      END IF;
      RETURN NEXT format('CREATE TABLE %I (%s%s) USING heap', ref, cols,
                         CASE WHEN shape = 'C' THEN '' ELSE ', PRIMARY KEY (pk, ck)' END);

      FOR step IN 1..nsteps LOOP
        pfx := format('/* %s step %s */ ', label, step);

        -- transaction control
        IF NOT in_xact THEN
          IF random() < 0.07 THEN
            RETURN NEXT pfx || 'BEGIN';
            in_xact := true;
            depth := 0;
          END IF;
        ELSE
          r := random();
          IF depth < 2 AND r < 0.10 THEN
            depth := depth + 1;
            RETURN NEXT pfx || 'SAVEPOINT sp' || depth;
          ELSIF depth > 0 AND r < 0.30 THEN
            r := random();
            IF r < 0.5 THEN
              RETURN NEXT pfx || 'ROLLBACK TO SAVEPOINT sp' || depth;
              RETURN NEXT pfx || 'RELEASE SAVEPOINT sp' || depth;
              depth := depth - 1;
            ELSIF r < 0.6 THEN
              -- roll back but stay inside the savepoint
              RETURN NEXT pfx || 'ROLLBACK TO SAVEPOINT sp' || depth;
            ELSE
              RETURN NEXT pfx || 'RELEASE SAVEPOINT sp' || depth;
              depth := depth - 1;
            END IF;
          ELSIF r < 0.42 THEN
            RETURN NEXT pfx || CASE WHEN random() < 0.65 THEN 'COMMIT' ELSE 'ROLLBACK' END;
            in_xact := false;
            depth := 0;
          END IF;
        END IF;

        -- the operation
        <<op>>
        BEGIN
        IF random() < (CASE WHEN in_xact THEN 0.02 ELSE 0.003 END) THEN
          RETURN NEXT pfx || format('TRUNCATE %I', tbl);
          RETURN NEXT pfx || format('TRUNCATE %I', ref);
          EXIT op;
        END IF;

        r := random();
        IF shape = 'C' THEN
          IF r < 0.35 THEN
            whr := format('INSERT INTO {T} (a, b) VALUES (%s, %s)',
                          quote_literal(widecol_diff_rand(0, 9)::text) || '::int', widecol_diff_bval());
            RETURN NEXT pfx || replace(whr, '{T}', quote_ident(tbl));
            RETURN NEXT pfx || replace(whr, '{T}', quote_ident(ref));
          ELSIF r < 0.45 THEN
            SELECT * INTO b FROM widecol_diff_batch(shape, 12);
            IF b.vals IS NOT NULL AND random() < 0.5 THEN
              RETURN NEXT pfx || format('INSERT INTO %I (a, b) VALUES %s', tbl, b.vals);
              RETURN NEXT pfx || format('INSERT INTO %I (a, b) VALUES %s', ref, b.vals);
            ELSE
              RETURN NEXT pfx || format('INSERT INTO %I (a, b) SELECT a, b FROM %s ORDER BY ord', tbl, b.src);
              RETURN NEXT pfx || format('INSERT INTO %I (a, b) SELECT a, b FROM %s ORDER BY ord', ref, b.src);
            END IF;
          ELSIF r < 0.50 THEN
            SELECT * INTO b FROM widecol_diff_batch(shape, 30);
            -- a server file is a superuser's (the suite runs as an ordinary role)
            RETURN NEXT pfx || 'SET ROLE NONE';
            RETURN NEXT pfx || format('COPY (SELECT a, b FROM %s ORDER BY ord) TO %L WITH (FORMAT csv)', b.src, csv);
            RETURN NEXT pfx || format('COPY %I (a, b) FROM %L WITH (FORMAT csv)', tbl, csv);
            RETURN NEXT pfx || format('COPY %I (a, b) FROM %L WITH (FORMAT csv)', ref, csv);
            RETURN NEXT pfx || 'RESET ROLE';
          ELSE
            IF r < 0.60 THEN
              whr := format('UPDATE {T} SET b = %s WHERE a = %s', widecol_diff_bval(), widecol_diff_rand(0, 9));
            ELSIF r < 0.65 THEN
              whr := format('UPDATE {T} SET a = (a + %s) %% 10 WHERE b %s', widecol_diff_rand(1, 9),
                            CASE WHEN random() < 0.2 THEN 'IS NULL' ELSE '= ' || widecol_diff_bval() END);
            ELSIF r < 0.68 THEN
              lo := widecol_diff_rand(0, 9);
              whr := format('UPDATE {T} SET b = left(b, 6) || %L WHERE a BETWEEN %s AND %s',
                            widecol_diff_rand(0, 9)::text, lo, lo + widecol_diff_rand(0, 3));
            ELSIF r < 0.77 THEN
              whr := format('DELETE FROM {T} WHERE a = %s', widecol_diff_rand(0, 9));
            ELSIF r < 0.82 THEN
              lo := widecol_diff_rand(0, 9);
              whr := format('DELETE FROM {T} WHERE a BETWEEN %s AND %s', lo, lo + widecol_diff_rand(0, 2));
            ELSIF r < 0.86 THEN
              whr := format('DELETE FROM {T} WHERE b %s',
                            CASE WHEN random() < 0.3 THEN 'IS NULL' ELSE '= ' || widecol_diff_bval() END);
            ELSIF r < 0.91 THEN
              whr := NULL;
              IF NOT is_heap THEN
                RETURN NEXT pfx || format('CALL widecol_diff_flush(%L)', tbl);
              END IF;
            ELSE
              whr := format('INSERT INTO {T} (a, b) VALUES (%s, %s)',
                            quote_literal(widecol_diff_rand(0, 9)::text) || '::int', widecol_diff_bval());
            END IF;
            IF whr IS NOT NULL THEN
              RETURN NEXT pfx || replace(whr, '{T}', quote_ident(tbl));
              RETURN NEXT pfx || replace(whr, '{T}', quote_ident(ref));
            END IF;
          END IF;
        ELSE
          -- shapes A and B
          IF r < 0.28 OR r >= 0.88 THEN
            -- single-row insert; sometimes onto a recently written key
            SELECT * INTO p, c FROM widecol_diff_key(rk_p, rk_c, 0.3, pmin, pmax, cmin, cmax);
            whr := format('INSERT INTO {T} (pk, ck, v, n) VALUES (%s, %s, %s, %s)',
                          widecol_diff_pk(shape, p), widecol_diff_ck(shape, c),
                          widecol_diff_val(), widecol_diff_num());
            RETURN NEXT pfx || replace(whr, '{T}', quote_ident(tbl));
            RETURN NEXT pfx || replace(whr, '{T}', quote_ident(ref)) || upsert;
            rk_p := (rk_p || p)[greatest(cardinality(rk_p) - 28, 1):];
            rk_c := (rk_c || c)[greatest(cardinality(rk_c) - 28, 1):];
          ELSIF r < 0.35 THEN
            -- multi-row insert (duplicates inside the batch: last one wins)
            SELECT * INTO b FROM widecol_diff_batch(shape, 15);
            IF b.vals IS NOT NULL AND random() < 0.4 THEN
              RETURN NEXT pfx || format('INSERT INTO %I (pk, ck, v, n) VALUES %s', tbl, b.vals);
            ELSE
              RETURN NEXT pfx || format('INSERT INTO %I (pk, ck, v, n) SELECT pk, ck, v, n FROM %s ORDER BY ord',
                                        tbl, b.src);
            END IF;
            RETURN NEXT pfx || format('INSERT INTO %I (pk, ck, v, n) SELECT DISTINCT ON (pk, ck) pk, ck, v, n '
                                      'FROM %s ORDER BY pk, ck, ord DESC', ref, b.src) || upsert;
          ELSIF r < 0.39 THEN
            -- COPY batch (duplicates inside the file: later line wins)
            SELECT * INTO b FROM widecol_diff_batch(shape, 40);
            RETURN NEXT pfx || 'SET ROLE NONE';
            RETURN NEXT pfx || format('COPY (SELECT pk, ck, v, n FROM %s ORDER BY ord) TO %L WITH (FORMAT csv)',
                                      b.src, csv);
            RETURN NEXT pfx || format('COPY %I (pk, ck, v, n) FROM %L WITH (FORMAT csv)', tbl, csv);
            RETURN NEXT pfx || 'RESET ROLE';
            RETURN NEXT pfx || format('INSERT INTO %I (pk, ck, v, n) SELECT DISTINCT ON (pk, ck) pk, ck, v, n '
                                      'FROM %s ORDER BY pk, ck, ord DESC', ref, b.src) || upsert;
          ELSIF r < 0.58 OR (r >= 0.65 AND r < 0.84) THEN
            -- UPDATE of non-key columns or DELETE, by key / partition / ck range / predicate
            SELECT * INTO p, c FROM widecol_diff_key(rk_p, rk_c, 0.7, pmin, pmax, cmin, cmax);
            lo := widecol_diff_rand(cmin, cmax);
            hi := least(lo + widecol_diff_rand(0, 6), cmax);
            IF r < 0.47 OR (r >= 0.65 AND r < 0.75) THEN
              whr := format('pk = %s AND ck = %s', widecol_diff_pk(shape, p), widecol_diff_ck(shape, c));
            ELSIF r < 0.51 OR (r >= 0.75 AND r < 0.77) THEN
              whr := format('pk = %s', widecol_diff_pk(shape, p));
            ELSIF r < 0.56 OR (r >= 0.77 AND r < 0.82) THEN
              IF random() < 0.7 THEN
                whr := format('pk = %s AND ck BETWEEN %s AND %s', widecol_diff_pk(shape, p),
                              widecol_diff_ck(shape, lo), widecol_diff_ck(shape, hi));
              ELSE
                whr := format('ck >= %s AND ck < %s', widecol_diff_ck(shape, lo), widecol_diff_ck(shape, hi));
              END IF;
            ELSE
              whr := (ARRAY[format('n %% 7 = %s', widecol_diff_rand(0, 6)),
                            format('n > %s', widecol_diff_rand(200, 1000)),
                            'v IS NULL',
                            format('length(v) > %s', widecol_diff_rand(5, 500))])[widecol_diff_rand(1, 4)];
            END IF;
            IF r < 0.58 THEN
              setc := widecol_diff_setc();
              RETURN NEXT pfx || format('UPDATE %I SET %s WHERE %s', tbl, setc, whr);
              RETURN NEXT pfx || format('UPDATE %I SET %s WHERE %s', ref, setc, whr);
            ELSE
              RETURN NEXT pfx || format('DELETE FROM %I WHERE %s', tbl, whr);
              RETURN NEXT pfx || format('DELETE FROM %I WHERE %s', ref, whr);
            END IF;
          ELSIF r < 0.65 THEN
            -- key-changing UPDATE of one row: moves it, overwriting the target key
            SELECT * INTO p, c FROM widecol_diff_key(rk_p, rk_c, 0.7, pmin, pmax, cmin, cmax);
            r := random();
            IF r < 0.45 THEN
              p2 := p; c2 := widecol_diff_rand(cmin, cmax);
            ELSIF r < 0.75 THEN
              p2 := widecol_diff_rand(pmin, pmax); c2 := c;
            ELSIF r < 0.97 THEN
              p2 := widecol_diff_rand(pmin, pmax); c2 := widecol_diff_rand(cmin, cmax);
            ELSE
              p2 := p; c2 := c;
            END IF;
            setc := format('pk = %s, ck = %s', widecol_diff_pk(shape, p2), widecol_diff_ck(shape, c2));
            IF random() < 0.5 THEN
              setc := setc || ', v = ' || widecol_diff_val();
            END IF;
            IF random() < 0.3 THEN
              setc := setc || ', n = coalesce(n, 0) + 1';
            END IF;
            whr := format('pk = %s AND ck = %s', widecol_diff_pk(shape, p), widecol_diff_ck(shape, c));
            RETURN NEXT pfx || format('UPDATE %I SET %s WHERE %s', tbl, setc, whr);
            IF p2 <> p OR c2 <> c THEN
              RETURN NEXT pfx || format('DELETE FROM %I WHERE pk = %s AND ck = %s AND EXISTS (SELECT 1 FROM %I WHERE %s)',
                                        ref, widecol_diff_pk(shape, p2), widecol_diff_ck(shape, c2), ref, whr);
            END IF;
            RETURN NEXT pfx || format('UPDATE %I SET %s WHERE %s', ref, setc, whr);
            rk_p := (rk_p || p2)[greatest(cardinality(rk_p) - 28, 1):];
            rk_c := (rk_c || c2)[greatest(cardinality(rk_c) - 28, 1):];
          ELSE
            -- 0.84 <= r < 0.88
            IF NOT is_heap THEN
              RETURN NEXT pfx || format('CALL widecol_diff_flush(%L)', tbl);
            END IF;
          END IF;
        END IF;
        END op;

        IF step % batch = 0 THEN
          checks := checks + 1;
          RETURN NEXT pfx || format('CALL widecol_diff_check(%L, %L, %L, %s, %L, %L)',
                                    tbl, ref, label, step,
                                    CASE WHEN shape = 'C' THEN NULL ELSE key_cols END, key_order);
        END IF;
      END LOOP;

      pfx := format('/* %s end */ ', label);
      IF in_xact THEN
        RETURN NEXT pfx || 'COMMIT';
      END IF;
      IF NOT is_heap THEN
        RETURN NEXT pfx || format('CALL widecol_diff_flush(%L)', tbl);
      END IF;
      RETURN NEXT pfx || format('CALL widecol_diff_check(%L, %L, %L, %s, %L, %L, %L)',
                                tbl, ref, label, nsteps,
                                CASE WHEN shape = 'C' THEN NULL ELSE key_cols END, key_order,
                                format('%s statements, %s checks', nsteps, checks + 1));
      RETURN NEXT pfx || format('DROP TABLE %I, %I', tbl, ref);
    END LOOP;
  END LOOP;
END $fn$;

-- Run.  Echo is limited to failing statements while the generated
-- statements execute; one NOTICE per seed and shape is printed.
\set wdiff_echo :ECHO
\set wdiff_quiet :QUIET
\set wdiff_stop :ON_ERROR_STOP
\set ON_ERROR_STOP on
\set QUIET on
\set ECHO errors
SELECT stmt FROM widecol_diff_script(:'am', '{1,2,3}', 700, 300) AS stmt \gexec
\set ECHO :wdiff_echo
\set QUIET :wdiff_quiet
\set ON_ERROR_STOP :wdiff_stop

RESET widecol.level0_max_size;
RESET max_parallel_workers_per_gather;
RESET synchronous_commit;
DROP FUNCTION widecol_diff_script(text, int[], int, int, int);
DROP PROCEDURE widecol_diff_check(regclass, regclass, text, int, text, text, text);
DROP FUNCTION widecol_diff_key(int[], int[], float8, int, int, int, int);
DROP PROCEDURE widecol_diff_flush(regclass);
DROP FUNCTION widecol_diff_emulate();
DROP FUNCTION widecol_diff_setc();
DROP FUNCTION widecol_diff_batch(text, int);
DROP FUNCTION widecol_diff_bval();
DROP FUNCTION widecol_diff_num();
DROP FUNCTION widecol_diff_val();
DROP FUNCTION widecol_diff_ck(text, int);
DROP FUNCTION widecol_diff_pk(text, int);
DROP FUNCTION widecol_diff_rand(int, int);
