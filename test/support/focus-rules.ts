/**
 * An evaluator of the FinOps Foundation's FOCUS 1.2 rule data (`focus_validator/rules/model-1.2.json` of
 * github.com/finopsfoundation/focus_validator, copied with its licence under test/fixtures/focus/), for tests.
 *
 * It reads a FOCUS CSV as the official validator does (focus_validator/data_loaders/csv_data_loader.py: polars
 * `read_csv`, an empty field is null, column types inferred from the values — integers `Int64`, other numbers
 * `Float64`, `true`/`false` `Boolean`, ISO date-times `Datetime` — so a decimal column written `12` is an integer
 * column and fails `TypeDecimal`), and interprets each check function as the validator's DuckDB generators do
 * (focus_validator/config_objects/focus_to_duckdb_converter.py):
 * - a rule is included when it has no applicability criteria or ANY of them is declared (`_check_rule_applicability`);
 *   a composite that is not applicable is not evaluated below it;
 * - `Type: "Dynamic"` rules have no requirement to run: the validator skips them (`SkippedDynamicCheck`), so does
 *   this (they are counted and listed in `skipped`);
 * - only MUST / MUST NOT rules are enforced (the others are `SkippedOptionalCheck`); a rule's condition is ANDed
 *   with the conditions of the composites that reference it (`_build_effective_condition` and the "downstream
 *   composite" enhancement);
 * - row checks count the rows where the violation predicate holds, with SQL's NULL logic (`col != 'x'` is not a
 *   violation when `col` is null); `ColumnByColumnEqualsColumnValue` compares `a × b` with `r` exactly in decimal
 *   (DuckDB compares IEEE doubles; see `productEquals`); `CheckDistinctCount` groups the rows under the condition by column A (null is a
 *   group) and counts distinct non-null B; a check naming a missing column fails (the validator turns DuckDB's
 *   binder error into one violation).
 * - `CheckDecimalValue` is evaluated (a decimal number), though the validator does not implement it yet.
 * - Stricter than the validator in one place: a condition `CheckNotValue(column, value)` holds for a null column
 *   (SQL's `IS DISTINCT FROM`), as the rules' words say ("when ChargeClass is not Correction"); the validator's
 *   predicate is false there, so rules conditioned on it never apply to rows without a ChargeClass.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type Req = { CheckFunction?: string; [k: string]: unknown };
interface ModelRule {
  Function: string;
  Type: 'Static' | 'Dynamic';
  ApplicabilityCriteria: string[];
  ValidationCriteria: { MustSatisfy: string; Keyword: string; Requirement: Req; Condition: Req };
}
interface Model {
  ModelRules: Record<string, ModelRule>;
  ModelDatasets: Record<string, { ModelRules: string[] }>;
}

const FIXTURES = fileURLToPath(new URL('../fixtures/focus/', import.meta.url));
export const loadModel = (): Model => JSON.parse(readFileSync(`${FIXTURES}model-1.2.json`, 'utf8')) as Model;
const CURRENCIES = new Set(
  readFileSync(`${FIXTURES}currency_codes.csv`, 'utf8')
    .split(/\r?\n/)
    .slice(1)
    .map((l) => l.split(',')[1]?.trim())
    .filter((c): c is string => !!c),
);

export type Value = string | null;
export type Row = Record<string, Value>;
type ColumnType = 'NULL' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMP WITH TIME ZONE' | 'VARCHAR';

export interface Dataset {
  columns: string[];
  rows: Row[];
  types: Record<string, ColumnType>;
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;

/** The type polars infers for a column of CSV text (empty fields are null). */
function inferType(values: Value[]): ColumnType {
  const present = values.filter((v): v is string => v !== null);
  if (present.length === 0) return 'NULL';
  if (present.every((v) => INT.test(v))) return 'BIGINT';
  if (present.every((v) => FLOAT.test(v))) return 'DOUBLE';
  if (present.every((v) => v === 'true' || v === 'false')) return 'BOOLEAN';
  if (present.every((v) => ISO_DATETIME.test(v) && !Number.isNaN(Date.parse(v)))) return 'TIMESTAMP WITH TIME ZONE';
  return 'VARCHAR';
}

/** A dataset from parsed CSV rows (header first): empty fields null, types inferred. */
export function datasetOf(csv: string[][]): Dataset {
  const [header, ...lines] = csv;
  const columns = header ?? [];
  const rows = lines.map((l) => Object.fromEntries(columns.map((c, i) => [c, l[i] === undefined || l[i] === '' ? null : l[i]!])));
  const types = Object.fromEntries(columns.map((c) => [c, inferType(rows.map((r) => r[c] ?? null))]));
  return { columns, rows, types };
}

class MissingColumn extends Error {}

/** A decimal text as an exact rational `digits / 10^scale` (exponents allowed). */
function exactDecimal(text: string): { digits: bigint; scale: number } | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const [, sign, whole, frac = '', exp = '0'] = m;
  let digits = BigInt(`${whole}${frac}` || '0');
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits: sign === '-' ? -digits : digits, scale };
}

/**
 * `a × b = r`, exactly in decimal: the meaning of the rule (its DuckDB form compares IEEE doubles, where 3.0 ×
 * 0.000005 is not 0.000015; it never runs on a row without ChargeClass, see `predicate`).
 */
function productEquals(a: string, b: string, r: string): boolean {
  const [x, y, z] = [exactDecimal(a), exactDecimal(b), exactDecimal(r)];
  if (!x || !y || !z) return false;
  const left = { digits: x.digits * y.digits, scale: x.scale + y.scale };
  const scale = Math.max(left.scale, z.scale);
  return left.digits * 10n ** BigInt(scale - left.scale) === z.digits * 10n ** BigInt(scale - z.scale);
}

type Pred = (row: Row) => boolean;
const TRUE: Pred = () => true;
const and = (a: Pred, b: Pred): Pred => (a === TRUE ? b : b === TRUE ? a : (r) => a(r) && b(r));

export interface Failure {
  rule: string;
  mustSatisfy: string;
  violations: number;
  detail: string;
}

export interface Result {
  failures: Failure[];
  /** MUST rules evaluated (leaves and composites) and how many passed. */
  evaluated: string[];
  /** Rules not evaluated, with why: `dynamic` (no requirement to run), `optional` (SHOULD/MAY), `not_applicable`. */
  skipped: Map<string, 'dynamic' | 'optional' | 'not_applicable'>;
}

const isMust = (keyword: string) => keyword === 'MUST' || keyword === 'MUST NOT';

export function evaluate(data: Dataset, declared: readonly string[], model = loadModel()): Result {
  const rules = model.ModelRules;
  const result: Result = { failures: [], evaluated: [], skipped: new Map() };
  const failed = new Map<string, Failure>();

  const col = (name: unknown): string => {
    if (typeof name !== 'string' || !data.columns.includes(name)) throw new MissingColumn(`missing column ${String(name)}`);
    return name;
  };
  const numeric = (c: string) => data.types[c] === 'BIGINT' || data.types[c] === 'DOUBLE';
  /** `col = value` as DuckDB compares a column with a literal (numbers numerically). */
  const equals = (c: string, row: Row, value: unknown): boolean | null => {
    const v = row[c] ?? null;
    if (v === null) return null;
    if (numeric(c)) return Number(v) === Number(value);
    return v === String(value);
  };
  const sameValue = (a: string, b: string, row: Row): boolean | null => {
    const va = row[a] ?? null;
    const vb = row[b] ?? null;
    if (va === null || vb === null) return null;
    return numeric(a) && numeric(b) ? Number(va) === Number(vb) : va === vb;
  };

  /** A condition (or a predicate of a check used as one) as a row predicate. */
  function predicate(req: Req | undefined): Pred {
    if (!req || !req.CheckFunction) return TRUE;
    const f = req.CheckFunction;
    if (f === 'AND') {
      const items = (req.Items as Req[]).map(predicate);
      return (r) => items.every((p) => p(r));
    }
    if (f === 'OR') {
      const items = (req.Items as Req[]).map(predicate);
      return (r) => items.some((p) => p(r));
    }
    if (f === 'CheckValue') {
      const c = col(req.ColumnName);
      return req.Value === null ? (r) => r[c] === null : (r) => equals(c, r, req.Value) === true;
    }
    if (f === 'CheckNotValue') {
      const c = col(req.ColumnName);
      // Stricter than the validator: "ChargeClass is not Correction" holds for a null ChargeClass (its DuckDB
      // predicate `ChargeClass IS NOT NULL AND ChargeClass <> 'Correction'` does not, which leaves such rules —
      // ListCost = ListUnitPrice × PricingQuantity among them — applying to no row where ChargeClass is null).
      return req.Value === null ? (r) => r[c] !== null : (r) => equals(c, r, req.Value) !== true;
    }
    if (f === 'CheckSameValue') {
      const [a, b] = [col(req.ColumnAName), col(req.ColumnBName)];
      return (r) => sameValue(a, b, r) === true;
    }
    if (f === 'CheckNotSameValue') {
      const [a, b] = [col(req.ColumnAName), col(req.ColumnBName)];
      return (r) => sameValue(a, b, r) === false;
    }
    // Any other leaf used as a condition: the rows that satisfy it.
    const v = leafViolation(req);
    if (v === 'dataset') throw new Error(`${f} can't be a row condition`);
    const c = col(req.ColumnName ?? req.ColumnAName);
    return (r) => r[c] !== null && !v(r);
  }

  /** A leaf check's violation predicate, or 'dataset' for checks over the whole dataset. */
  function leafViolation(req: Req): Pred | 'dataset' {
    const f = req.CheckFunction!;
    switch (f) {
      case 'ColumnPresent':
      case 'CheckDistinctCount':
        return 'dataset';
      case 'TypeString': {
        const c = col(req.ColumnName);
        const bad = !['VARCHAR', 'NULL'].includes(data.types[c]!);
        return (r) => r[c] !== null && bad;
      }
      case 'TypeDecimal': {
        const c = col(req.ColumnName);
        const bad = !['DOUBLE', 'NULL'].includes(data.types[c]!);
        return (r) => r[c] !== null && bad;
      }
      case 'TypeDateTime': {
        const c = col(req.ColumnName);
        const typed = ['TIMESTAMP WITH TIME ZONE', 'NULL'].includes(data.types[c]!);
        return (r) => r[c] !== null && !typed && !/^\d{4}-[0-1]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\dZ$/.test(r[c]!);
      }
      case 'FormatDateTime': {
        const c = col(req.ColumnName);
        const typed = ['TIMESTAMP WITH TIME ZONE', 'NULL'].includes(data.types[c]!);
        return (r) => r[c] !== null && !typed && !(/^\d{4}-[0-1]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\dZ?$/.test(r[c]!) && !Number.isNaN(Date.parse(r[c]!)));
      }
      case 'FormatNumeric': {
        const c = col(req.ColumnName);
        return (r) => r[c] !== null && !/^[+-]?([0-9]*[.])?[0-9]+([eE][+-]?[0-9]+)?$/.test(r[c]!.trim());
      }
      case 'CheckDecimalValue': {
        const c = col(req.ColumnName);
        return (r) => r[c] !== null && !/^[+-]?([0-9]*[.])?[0-9]+([eE][+-]?[0-9]+)?$/.test(r[c]!.trim());
      }
      case 'FormatString': {
        const c = col(req.ColumnName);
        // eslint-disable-next-line no-control-regex
        return (r) => r[c] !== null && !/^[\x00-\x7F]*$/.test(r[c]!);
      }
      case 'FormatCurrency': {
        const c = col(req.ColumnName);
        return (r) => r[c] !== null && !/^[A-Z]{3}$/.test(r[c]!.trim());
      }
      case 'CheckNationalCurrency':
      case 'FormatBillingCurrencyCode': {
        const c = col(req.ColumnName);
        return (r) => r[c] !== null && !CURRENCIES.has(r[c]!.trim());
      }
      case 'FormatKeyValue': {
        const c = col(req.ColumnName);
        return (r) => {
          if (r[c] === null) return false;
          try {
            JSON.parse(r[c]!);
            return false;
          } catch {
            return true;
          }
        };
      }
      case 'FormatUnit':
        // SHOULD only in model-1.2.json: never enforced here.
        return () => false;
      case 'CheckValue': {
        const c = col(req.ColumnName);
        return req.Value === null ? (r) => r[c] !== null : (r) => equals(c, r, req.Value) === false;
      }
      case 'CheckNotValue': {
        const c = col(req.ColumnName);
        return req.Value === null ? (r) => r[c] === null : (r) => equals(c, r, req.Value) === true;
      }
      case 'CheckSameValue': {
        const [a, b] = [col(req.ColumnAName), col(req.ColumnBName)];
        return (r) => sameValue(a, b, r) === false;
      }
      case 'CheckNotSameValue': {
        const [a, b] = [col(req.ColumnAName), col(req.ColumnBName)];
        return (r) => sameValue(a, b, r) === true;
      }
      case 'CheckGreaterOrEqualThanValue': {
        const c = col(req.ColumnName);
        return (r) => r[c] !== null && Number(r[c]) < Number(req.Value);
      }
      case 'ColumnByColumnEqualsColumnValue': {
        const [a, b, x] = [col(req.ColumnAName), col(req.ColumnBName), col(req.ResultColumnName)];
        return (r) => r[a] !== null && r[b] !== null && r[x] !== null && !productEquals(r[a]!, r[b]!, r[x]!);
      }
      default:
        throw new Error(`no evaluator for CheckFunction ${f}`);
    }
  }

  /** Violations of a requirement under a condition: rows (row checks), groups (distinct counts), or failed rules. */
  function violations(ruleId: string, req: Req, cond: Pred): { count: number; detail: string } {
    const f = req.CheckFunction;
    if (!f) return { count: 0, detail: '' };
    if (f === 'CheckModelRule') return evalRule(req.ModelRuleId as string, cond) ? { count: 0, detail: '' } : { count: 1, detail: `${String(req.ModelRuleId)} failed` };
    if (f === 'AND' || f === 'OR') {
      const items = req.Items as Req[];
      const rowLevel = items.every((i) => i.CheckFunction !== 'CheckModelRule' && i.CheckFunction !== 'AND' && i.CheckFunction !== 'OR' && leafKind(i) === 'row');
      if (rowLevel) {
        const preds = items.map((i) => leafViolation(i) as Pred);
        const bad = data.rows.filter((r) => cond(r) && (f === 'AND' ? preds.some((p) => p(r)) : preds.every((p) => p(r))));
        return { count: bad.length, detail: bad.length ? `first: ${JSON.stringify(pick(bad[0]!, items))}` : '' };
      }
      const parts = items.map((i) => violations(ruleId, i, cond));
      if (f === 'OR' && parts.some((p) => p.count === 0)) return { count: 0, detail: '' };
      const count = parts.reduce((s, p) => s + p.count, 0);
      return { count, detail: parts.map((p) => p.detail).filter(Boolean).join('; ') };
    }
    if (f === 'ColumnPresent') return data.columns.includes(req.ColumnName as string) ? { count: 0, detail: '' } : { count: 1, detail: `no column ${String(req.ColumnName)}` };
    if (f === 'CheckDistinctCount') {
      const [a, b] = [col(req.ColumnAName), col(req.ColumnBName)];
      const groups = new Map<Value, Set<string>>();
      for (const r of data.rows) {
        if (!cond(r)) continue;
        const s = groups.get(r[a] ?? null) ?? new Set<string>();
        if (r[b] !== null) s.add(r[b]!);
        groups.set(r[a] ?? null, s);
      }
      const bad = [...groups].filter(([, s]) => s.size !== Number(req.ExpectedCount));
      return { count: bad.length, detail: bad.length ? `${a}=${String(bad[0]![0])} has ${bad[0]![1].size} ${b}` : '' };
    }
    const v = leafViolation(req) as Pred;
    const bad = data.rows.filter((r) => cond(r) && v(r));
    return { count: bad.length, detail: bad.length ? `first: ${JSON.stringify(pick(bad[0]!, [req]))}` : '' };
  }

  function leafKind(req: Req): 'row' | 'dataset' {
    return req.CheckFunction === 'ColumnPresent' || req.CheckFunction === 'CheckDistinctCount' ? 'dataset' : 'row';
  }

  function pick(row: Row, reqs: Req[]): Row {
    const names = new Set<string>();
    const walk = (r: Req) => {
      for (const k of ['ColumnName', 'ColumnAName', 'ColumnBName', 'ResultColumnName']) if (typeof r[k] === 'string') names.add(r[k] as string);
      for (const i of (r.Items as Req[] | undefined) ?? []) walk(i);
    };
    reqs.forEach(walk);
    return Object.fromEntries([...names].map((n) => [n, row[n] ?? null]));
  }

  const applicable = (rule: ModelRule) => rule.ApplicabilityCriteria.length === 0 || rule.ApplicabilityCriteria.some((c) => declared.includes(c));

  /** Whether a rule holds under the inherited condition (true for rules not evaluated: skipped ones are listed). */
  function evalRule(id: string, inherited: Pred): boolean {
    const rule = rules[id];
    if (!rule) throw new Error(`no rule ${id}`);
    if (!applicable(rule)) {
      result.skipped.set(id, 'not_applicable');
      return true;
    }
    if (rule.Type === 'Dynamic') {
      result.skipped.set(id, 'dynamic');
      return true;
    }
    const vc = rule.ValidationCriteria;
    if (!isMust(vc.Keyword)) {
      result.skipped.set(id, 'optional');
      return true;
    }
    if (!result.evaluated.includes(id)) result.evaluated.push(id);
    let outcome: { count: number; detail: string };
    try {
      const cond = and(inherited, predicate(vc.Condition));
      outcome = violations(id, vc.Requirement, cond);
    } catch (error) {
      if (!(error instanceof MissingColumn)) throw error;
      outcome = { count: 1, detail: error.message };
    }
    // Only leaves are failures of their own; a composite fails through its children.
    const leaf = !JSON.stringify(vc.Requirement).includes('CheckModelRule');
    if (outcome.count > 0 && leaf && !failed.has(id)) {
      const f = { rule: id, mustSatisfy: vc.MustSatisfy, violations: outcome.count, detail: outcome.detail };
      failed.set(id, f);
      result.failures.push(f);
    }
    return outcome.count === 0;
  }

  for (const dataset of Object.values(model.ModelDatasets)) for (const id of dataset.ModelRules) evalRule(id, TRUE);
  return result;
}

/** The applicability criteria Burnrate's FOCUS export declares (docs/features/spend-and-exports.md). */
export const BURNRATE_CRITERIA = [
  'USAGE_MEASUREMENT_SUPPORTED',
  'UNIT_PRICING_SUPPORTED',
  'PUBLIC_PRICE_LIST_SUPPORTED',
  'SUB_ACCOUNT_SUPPORTED',
  'ACCOUNT_NAMING_SUPPORTED',
  'TAGGING_SUPPORTED',
] as const;
