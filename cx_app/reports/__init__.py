"""Metric reports for CX teams: an Excel workbook and a self-contained HTML file."""
