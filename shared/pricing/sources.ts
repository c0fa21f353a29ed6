/**
 * Where each row of the built-in price table comes from: the page it was transcribed from (`source`), the UTC day it
 * was last checked against that page (`checkedAt`) and, where a figure was read from a third party quoting the page,
 * a `note` saying which. Kept apart from the rates (prices.json): only the prices API shows it, so the functions that
 * price usage (ingestion, the connector worker) do not carry its text. price-sources.json is keyed like the table's
 * rows: `provider/model` for a model, `provider/item` or `provider/item/model` for a unit price; every row of
 * prices.json has exactly one entry here and every entry a row (test/unit/price-sources.test.ts).
 */
import builtInSources from './price-sources.json' with { type: 'json' };

export interface PriceSource {
  /** The page the row was transcribed from (an https URL). */
  readonly source: string;
  /** The UTC day the row was last checked against `source` (YYYY-MM-DD). */
  readonly checkedAt: string;
  /** Where a figure was read from a third party quoting the page, which one. */
  readonly note?: string;
}

export interface PriceSources {
  /** How the table was transcribed and what its rates mean (the table as a whole). */
  readonly about: string;
  /** By `provider/model` (a row of `models`). */
  readonly models: ReadonlyMap<string, PriceSource>;
  /** By `provider/item` or `provider/item/model` (a row of `units`). */
  readonly units: ReadonlyMap<string, PriceSource>;
}

/** The key of a model row's provenance: its provider and model as the row writes them. */
export const modelSourceKey = (provider: string, model: string): string => `${provider}/${model}`;

/** The key of a unit row's provenance: `provider/item`, and `/model` when the row is for one model. */
export const unitSourceKey = (provider: string, item: string, model: string | null): string =>
  model === null ? `${provider}/${item}` : `${provider}/${item}/${model}`;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const HTTPS = /^https:\/\/\S+$/;

function entries(value: unknown, where: string): Map<string, PriceSource> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where} must be an object keyed by row`);
  return new Map(
    Object.entries(value).map(([key, entry]: [string, unknown]) => {
      const at = `${where}["${key}"]`;
      if (typeof entry !== 'object' || entry === null) throw new Error(`${at}: not an object`);
      const { source, checkedAt, note, ...rest } = entry as Record<string, unknown>;
      if (Object.keys(rest).length > 0) throw new Error(`${at}: unknown field ${Object.keys(rest).join(', ')} (source, checkedAt, note)`);
      if (typeof source !== 'string' || !HTTPS.test(source)) throw new Error(`${at}.source must be an https URL, got ${JSON.stringify(source)}`);
      if (typeof checkedAt !== 'string' || !DAY.test(checkedAt)) throw new Error(`${at}.checkedAt must be YYYY-MM-DD, got ${JSON.stringify(checkedAt)}`);
      if (note !== undefined && (typeof note !== 'string' || note === '')) throw new Error(`${at}.note must be a non-empty string`);
      return [key, { source, checkedAt, ...(note === undefined ? {} : { note }) }];
    }),
  );
}

/** Validates a provenance document (the shape of price-sources.json). */
export function loadPriceSources(data: unknown): PriceSources {
  if (typeof data !== 'object' || data === null) throw new Error('price sources: not an object');
  const doc = data as Record<string, unknown>;
  if (typeof doc.about !== 'string' || doc.about === '') throw new Error('price sources: about must be a non-empty string');
  return { about: doc.about, models: entries(doc.models, 'price sources: models'), units: entries(doc.units ?? {}, 'price sources: units') };
}

let builtIn: PriceSources | undefined;

/** The built-in table's provenance (price-sources.json), validated on first use (not at load: only a listing reads it). */
export function priceSources(): PriceSources {
  builtIn ??= loadPriceSources(builtInSources);
  return builtIn;
}

/** Where a built-in model row comes from (every row has an entry: the unit test checks it). */
export function modelSource(provider: string, model: string): PriceSource {
  const found = priceSources().models.get(modelSourceKey(provider, model));
  if (!found) throw new Error(`price sources: no entry for the built-in row ${provider}/${model}`);
  return found;
}
