import {
  type DescField,
  type DescMessage,
  type DescService,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import { TextFormat, type TextRules, text } from "../../../gen/aiagent/v1/field_options_pb.js";
import { invalidArgument } from "../../domain/errors.js";
import { CONTROL, CONTROL_BUT_LINES } from "../../domain/validate.js";
import type { AnyHandler } from "../call.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What is wrong with one string of a request against its field's declared rules, or undefined; the empty string (the
 * unset field) passes. The field's name is made by the caller only for a refusal.
 */
function textProblem(value: string, rules: TextRules | undefined): string | undefined {
  if (value === "") return undefined;
  // Whatever a field declares: no back end stores an unpaired surrogate (SQLite would change it) nor a NUL (PostgreSQL
  // refuses it). isWellFormed is native: far cheaper than a Unicode-aware regular expression.
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) return "must be valid Unicode";
  if (rules && rules.maxLength > 0 && value.length > rules.maxLength)
    return `must be at most ${rules.maxLength} characters`;
  switch (rules?.format) {
    case TextFormat.UUID:
      return UUID.test(value) ? undefined : "must be a uuid";
    case TextFormat.LINE:
      return CONTROL.test(value) ? "must not contain control characters" : undefined;
    case TextFormat.LINES:
      return CONTROL_BUT_LINES.test(value) ? "must not contain control characters" : undefined;
    default:
      return value.includes("\u0000") ? "must not contain control characters" : undefined;
  }
}

// Reading an option decodes it from the descriptor's bytes each time: read once per field.
const rulesOf = new WeakMap<DescField, TextRules | null>();

/** The field's declared text rules, if any. */
export function textRules(f: DescField): TextRules | undefined {
  let r = rulesOf.get(f);
  if (r === undefined) {
    r = hasOption(f, text) ? getOption(f, text) : null;
    rulesOf.set(f, r);
  }
  return r ?? undefined;
}

type Msg = Record<string, unknown>;

/** The value a message holds for a field (a oneof member's only when that member is the one set). */
function fieldValue(msg: Msg, f: DescField): unknown {
  if (!f.oneof) return msg[f.localName];
  const o = msg[f.oneof.localName] as { case?: string; value?: unknown } | undefined;
  return o?.case === f.localName ? o.value : undefined;
}

/** A field that can hold a string (alone, in a list or a map's values) or a message, with its declared text rules. */
interface Ruled {
  readonly f: DescField;
  readonly rules: TextRules | undefined;
}

const ruledOf = new WeakMap<DescMessage, readonly Ruled[]>();

/** The fields of a message the rules can refuse anything in, found once per message type (not per request). */
function ruledFields(desc: DescMessage): readonly Ruled[] {
  let r = ruledOf.get(desc);
  if (!r) {
    const strings = (f: DescField) => "scalar" in f && f.scalar === ScalarType.STRING;
    r = desc.fields
      .filter(
        (f) =>
          (f.fieldKind === "scalar" && strings(f)) ||
          f.fieldKind === "message" ||
          (f.fieldKind === "list" && (f.listKind === "message" || (f.listKind === "scalar" && strings(f)))) ||
          (f.fieldKind === "map" && f.mapKind === "scalar" && strings(f)),
      )
      .map((f) => ({ f, rules: textRules(f) }));
    ruledOf.set(desc, r);
  }
  return r;
}

/**
 * Refuses a request any string of which breaks its field's rules (declared in the contract with the
 * `aiagent.v1.text` option), naming the field as the JSON routes spell it (`contact.email`, `knowledge[2].title`).
 */
export function checkFieldRules(desc: DescMessage, msg: Msg, prefix = ""): void {
  for (const { f, rules } of ruledFields(desc)) {
    const v = fieldValue(msg, f);
    if (v === undefined || v === null) continue;
    if (f.fieldKind === "scalar") {
      const problem = textProblem(v as string, rules);
      if (problem) throw invalidArgument(prefix + f.name, problem);
    } else if (f.fieldKind === "message") checkFieldRules(f.message, v as Msg, `${prefix}${f.name}.`);
    else if (f.fieldKind === "list") {
      const list = v as unknown[];
      for (let i = 0; i < list.length; i++) {
        if (f.listKind === "message") checkFieldRules(f.message, list[i] as Msg, `${prefix}${f.name}[${i}].`);
        else {
          const problem = textProblem(list[i] as string, rules);
          if (problem) throw invalidArgument(`${prefix}${f.name}[${i}]`, problem);
        }
      }
    } else
      for (const [k, s] of Object.entries(v as Record<string, string>)) {
        const problem = textProblem(s, rules);
        if (problem) throw invalidArgument(`${prefix}${f.name}.${k}`, problem);
      }
  }
}

/**
 * A service's handlers behind its contract's field rules: every protocol's request is checked before its access
 * gate and its handler run, so no store sees a value its encoding refuses (a NUL) or the contract does not allow.
 */
export function withFieldRules(desc: DescService, handlers: Record<string, AnyHandler>): Record<string, AnyHandler> {
  const out: Record<string, AnyHandler> = { ...handlers };
  for (const m of desc.methods) {
    const h = handlers[m.localName];
    if (!h) continue;
    const input = m.input;
    out[m.localName] =
      m.methodKind === "server_streaming"
        ? (req, call) => {
            checkFieldRules(input, req as Msg);
            return h(req, call);
          }
        : (req, call) => {
            // A refusal is the call's rejection, as an async function's would be, without one around the handler's
            // promise (which would take two more turns of the microtask queue to adopt it).
            try {
              checkFieldRules(input, req as Msg);
              return h(req, call);
            } catch (e) {
              return Promise.reject(e);
            }
          };
  }
  return out;
}
