/**
 * The secrets a pack needs (`reach.json` `secrets`): each names the hosts its value may be sent to (allowedHosts
 * syntax). Values never appear in a pack, a request or a record: a tool writes the placeholder `{{secret:NAME}}`, the
 * host substitutes the value on the way out to those hosts only and puts the placeholder back wherever the value
 * comes back (src/sandbox/host/secrets.ts; docs/authoring.md "Secrets").
 * @module
 */
import { z } from "zod";
import { strictObject } from "./_common.ts";
import type { StrictObject } from "./_common.ts";
import { typedSchema } from "./_lazy.ts";

/** A secret's name: an environment-variable-style name (letters, digits, `_`; not starting with a digit), 1–64 characters. */
export const SECRET_NAME_RE: RegExp = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Host pattern, as `policies.allowedHosts` writes it: `api.example.com`, `*.example.com`, `127.0.0.1`. */
const HOST_PATTERN_RE = /^(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** One declared secret: where its value may be sent, and what it is for (shown to whoever supplies it). */
export const SecretDeclarationSchema: () => StrictObject<{ hosts: z.ZodArray<z.ZodString>; description: z.ZodOptional<z.ZodString> }> = typedSchema(() => strictObject("secrets[name]", {
  hosts: z
    .array(z.string().regex(HOST_PATTERN_RE, { error: "expected a host pattern such as api.example.com or *.example.com" }))
    .min(1, { error: "secrets[name].hosts: name at least one host the value may be sent to" })
    .max(64),
  description: z.string().max(1000).optional(),
}));

/** The `secrets` member of `reach.json`: name → declaration (at most 32). */
export const SecretsSchema: () => z.ZodRecord<z.ZodString, ReturnType<typeof SecretDeclarationSchema>> = typedSchema(() => z
  .record(z.string().regex(SECRET_NAME_RE, { error: "a secret name is letters, digits and _ (not starting with a digit), at most 64 characters" }), SecretDeclarationSchema())
  .refine((r) => Object.keys(r).length <= 32, { error: "secrets: at most 32 secrets" }));

/** A declared secret. */
export type SecretDeclaration = z.output<ReturnType<typeof SecretDeclarationSchema>>;
/** The declared secrets of a pack, by name. */
export type SecretDeclarations = Readonly<Record<string, { readonly hosts: readonly string[]; readonly description?: string | undefined }>>;
