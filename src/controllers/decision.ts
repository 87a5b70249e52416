// What a pure decide function returns besides object writes.
export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}
