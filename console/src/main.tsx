import { render } from "preact";
import "./styles.css";
import { App } from "./app";
import { resumeSession } from "./session";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
  // A reload keeps a member signed in: the browser still holds the session cookie.
  void resumeSession();
}
