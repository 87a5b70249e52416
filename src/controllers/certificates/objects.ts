// Annotation and label keys the certificate controllers write on requests and Secrets.
import { CertificateAnnotation, ManagedLabel } from '../../api/annotations.ts';

export const ANN = CertificateAnnotation;
export const LABEL = ManagedLabel;
