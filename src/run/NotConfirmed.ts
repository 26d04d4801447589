// The question before spending (RunManifestOptions.confirm) was answered no: nothing was
// sent. Its own small module, so the library's entry exports it without loading a run.

export class NotConfirmed extends Error {
  readonly _tag = "NotConfirmed";
  constructor() {
    super("not confirmed, nothing was sent");
  }
}
