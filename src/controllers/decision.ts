// What a pure decide function returns besides object writes.
export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** the controller the Event comes from, when not the one recording it (e.g. an approval made by the request controller) */
  controller?: string;
}
