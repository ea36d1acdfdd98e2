//! Reports: figures as SVG, HTML pages, limits tables.
