import { showControls } from '../../src-shared/text/controlChars.js';

/** Board text (titles, notes, reasons, the goal) as the window draws it: controls an older journal may hold
 *  shown as escapes, and isolated from the text around it (<bdi>) so a right-to-left run cannot reorder the
 *  labels beside it. `oneLine` shows tabs and newlines as escapes too. */
export const UserText = ({ text, oneLine = false }: { text: string; oneLine?: boolean }) => <bdi>{showControls(text, oneLine ? 'none' : 'tab-newline')}</bdi>;
