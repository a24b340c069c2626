// Credentials in connection URLs and strings never reach a message: every form a `--db` URL (or any connection
// string) takes, each with the secret "s3cret" (and its percent-encodings), comes out of redactSecrets without it;
// what is not a secret (user, host, port, database, sslmode) stays.
import { describe, expect, it } from "vitest";
import { redactSecrets } from "./redact.ts";
import { redactUrl } from "./postgres.ts";

const FORMS: [string, string][] = [
  ["user:password@", "postgres://app:s3cret@db.example:5432/runs"],
  ["postgresql://", "postgresql://app:s3cret@db.example/runs"],
  ["percent-encoded password", "postgres://app:s3%63ret%40x@db.example/runs"],
  ["password with a raw @", "postgres://app:s3cret@x@db.example/runs"],
  ["password with a raw /", "postgres://app:s3cret/x@db.example/runs"],
  ["?password=", "postgres://app@db.example/runs?password=s3cret"],
  ["?sslpassword=", "postgres://app@db.example/runs?sslmode=verify-full&sslpassword=s3cret"],
  ["?sslkey= and its passphrase", "postgres://db.example/runs?sslkey=/keys/s3cret.pem&sslpassword=s3cret"],
  ["upper-case name", "postgres://db.example/runs?PassWord=s3cret"],
  ["percent-encoded name", "postgres://db.example/runs?pass%77ord=s3cret"],
  ["percent-encoded value", "postgres://db.example/runs?password=s3%63ret"],
  ["pass=, pwd=, secret=, token=, key=", "postgres://h/d?pass=s3cret&pwd=s3cret&client_secret=s3cret&api_token=s3cret&apikey=s3cret&auth=s3cret"],
  [";-separated", "postgres://h/d?sslmode=require;password=s3cret"],
  ["socket-style (host in the query)", "postgresql:///runs?host=/var/run/postgresql&password=s3cret"],
  ["socket-style (encoded host)", "postgres://app:s3cret@%2Fvar%2Frun%2Fpostgresql/runs"],
  ["https URL", "https://user:s3cret@api.example/x?access_token=s3cret"],
  ["libpq key=value", "host=db.example port=5432 user=app password=s3cret dbname=runs"],
  ["libpq quoted value", "host=db.example password='s3cret with spaces' dbname=runs"],
  ["libpq sslpassword", "host=db.example sslpassword = s3cret"],
  ["JSON field", '{"host":"db.example","password":"s3cret"}'],
];

describe("redactSecrets", () => {
  for (const [name, url] of FORMS) {
    it(`redacts ${name}`, () => {
      for (const text of [url, `cannot connect to PostgreSQL at ${url}: refused`, `--db got ${JSON.stringify(url)}; check it`, JSON.stringify({ error: { message: `at ${url}` } })]) {
        const out = redactSecrets(text);
        expect(out, text).not.toMatch(/s3cret|s3%63ret/i);
        expect(out, text).toContain("***");
      }
    });
  }

  it("keeps what is not a secret, and text without credentials unchanged", () => {
    expect(redactSecrets("cannot connect to postgres://app:s3cret@db.example:5432/runs?sslmode=require (refused)")).toBe("cannot connect to postgres://app:***@db.example:5432/runs?sslmode=require (refused)");
    expect(redactSecrets('--db got "postgres://h/d?password=x&sslmode=verify-full"; fix it')).toBe('--db got "postgres://h/d?password=***&sslmode=verify-full"; fix it');
    for (const plain of ["run 7f3e COMPLETED in 12 ms", "postgres://app@db.example/runs", "see https://example.com/docs?page=2#top", "a=1 b=2"]) expect(redactSecrets(plain)).toBe(plain);
  });

  it("keeps JSON around a redacted URL parseable", () => {
    const doc = JSON.stringify({ error: { message: 'bad "postgres://u:s3cret@h/d?password=s3cret" here', other: "x@y" } });
    const out = redactSecrets(doc);
    expect(out).not.toContain("s3cret");
    expect(JSON.parse(out)).toMatchObject({ error: { other: "x@y" } });
  });

  it("is what postgres.ts's redactUrl uses", () => {
    expect(redactUrl("postgres://u:s3cret@h/db?sslpassword=s3cret")).toBe("postgres://u:***@h/db?sslpassword=***");
  });
});
