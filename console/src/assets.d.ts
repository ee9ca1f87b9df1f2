/** Stylesheets are bundled by esbuild into console.css. */
declare module "*.css";
