/** A plain-text message to one recipient: what the link e-mails, the invitation and the paused notice are built as. */
export interface PlainEmail {
  to: string;
  /** Fixed text first (`[Burnrate] …`); one line. */
  subject: string;
  /** Body lines (plain text; a link on a line of its own). */
  lines: string[];
  /** Names the `.eml` file locally, e.g. `invitation-inv_…`. */
  tag: string;
}
