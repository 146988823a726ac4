// The Go editor of the "Your kernel" tab: CodeMirror 6 with Go highlighting, line numbers
// and the server's errors marked on their lines. Its own entry point, loaded by the page
// only when the tab opens, so that the articles' page does not pay for it.

import { go } from "@codemirror/lang-go";
import { type Diagnostic, lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { basicSetup } from "codemirror";

/** One error of the server, at a 1-based line and column (0: no place). */
export interface SourceError {
  line: number;
  column: number;
  message: string;
}

/** The editor as the page uses it. */
export interface Editor {
  text(): string;
  setText(text: string): void;
  /** mark shows the errors on their lines (an empty list clears them). */
  mark(errors: SourceError[]): void;
  /** The editor's DOM element (the browser test reads its marks). */
  readonly dom: HTMLElement;
}

/** createEditor mounts an editor in parent; onChange is called after each edit. */
export function createEditor(parent: HTMLElement, doc: string, onChange: () => void): Editor {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        basicSetup,
        go(),
        lintGutter(),
        EditorState.tabSize.of(4),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) onChange();
        }),
        EditorView.contentAttributes.of({ "aria-label": "Go source of your kernel" }),
      ],
    }),
  });
  return {
    dom: view.dom,
    text: () => view.state.doc.toString(),
    setText: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    mark: (errors) => {
      const doc = view.state.doc;
      const diagnostics: Diagnostic[] = errors.map((e) => {
        const line = doc.line(Math.min(Math.max(e.line, 1), doc.lines));
        const from = Math.min(line.from + Math.max(e.column - 1, 0), line.to);
        return { from, to: Math.max(from, line.to), severity: "error", message: e.message };
      });
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
  };
}
