/** "Download CSV": the account's spend of the chosen range (GET /spend/export) saved as a file. */
import { api, ok } from '../../api/client.ts';
import { dayRange } from '../../ui/chart.tsx';
import { useSubmit } from '../../ui/form.tsx';
import { ErrorBox } from '../../ui/states.tsx';

/** API.md "Spend insight": an export covers at most 92 days (the API answers 400 past that). */
export const MAX_EXPORT_DAYS = 92;

/** The file name the API's Content-Disposition gives (`burnrate-spend-<from>-to-<to>.csv`). */
export function exportFilename(from: string, to: string): string {
  return `burnrate-spend-${from}-to-${to}.csv`;
}

function saveFile(text: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function ExportButton({ from, to }: { from: string; to: string }) {
  const submit = useSubmit();
  const tooLong = dayRange(from, to).length > MAX_EXPORT_DAYS;
  return (
    <div class="export">
      <button
        type="button"
        class="secondary"
        disabled={tooLong || submit.busy}
        aria-describedby="export-note"
        onClick={() =>
          void submit.run(async () => {
            const csv = await ok(api.GET('/spend/export', { params: { query: { from, to } }, parseAs: 'text' }));
            saveFile(csv, exportFilename(from, to));
          })
        }
      >
        {submit.busy ? 'Preparing the CSV…' : 'Download CSV'}
      </button>
      <small id="export-note" class="muted">
        {tooLong
          ? `The export is limited to ${MAX_EXPORT_DAYS} days: choose a shorter range.`
          : 'Spend of this range per day, key and model.'}
      </small>
      <ErrorBox error={submit.error} />
    </div>
  );
}
