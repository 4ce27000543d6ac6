// The vendored browser libraries (console/vendor.json): each is a classic script that defines one
// global, loaded once, on first use, from this console's own origin.

const GLOBALS = {
  konva: ["konva.min.js", "Konva"],
  x6: ["x6.min.js", "X6"],
  "json-editor": ["jsoneditor.js", "JSONEditor"],
  dagre: ["dagre.min.js", "dagre"],
  "swagger-ui": ["swagger-ui-bundle.js", "SwaggerUIBundle"],
};

const loading = new Map();
const styles = new Map();

/** Resolves once the library's stylesheet (a file of its vendored folder) is loaded, once. */
export function vendorStyle(name, file) {
  const key = `${name}/${file}`;
  if (!styles.has(key)) {
    styles.set(key, new Promise((resolve, reject) => {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = new URL(`../vendor/${key}`, import.meta.url).href;
      link.onload = () => resolve(link);
      link.onerror = () => { styles.delete(key); reject(new Error(`${file} did not load`)); };
      document.head.append(link);
    }));
  }
  return styles.get(key);
}

/** Resolves to the library's global (window.Konva, window.X6, …), loading its script once. */
export function vendor(name) {
  const known = GLOBALS[name];
  if (!known) return Promise.reject(new Error(`no vendored library ${name}`));
  if (!loading.has(name)) {
    const [file, global] = known;
    loading.set(name, new Promise((resolve, reject) => {
      if (window[global]) { resolve(window[global]); return; }
      const script = document.createElement("script");
      script.src = new URL(`../vendor/${name}/${file}`, import.meta.url).href;
      script.onload = () => (window[global] ? resolve(window[global])
        : reject(new Error(`${file} defined no ${global}`)));
      script.onerror = () => { loading.delete(name); reject(new Error(`${file} did not load`)); };
      document.head.append(script);
    }));
  }
  return loading.get(name);
}
