import { render } from 'preact';
import { App } from './app.js';
import './base.css';
import './pages.css';

render(<App />, document.getElementById('app')!);
