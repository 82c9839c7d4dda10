# signupd in italiano: ogni parola che un visitatore legge nelle pagine e nelle due email.
# Gli identificativi dei messaggi e le variabili ($list, $site, ...) restano quelli di en.ftl.
#
# Registro: «tu», come fa il web italiano per le newsletter; frasi brevi.
# Glossario:
#   sign up / signup        - iscriversi / iscrizione
#   confirm                 - confermare
#   list                    - lista
#   remove (my address)     - rimuovere (il mio indirizzo); i dati vengono «cancellati»
#   preferences             - preferenze / pagina delle preferenze
#   email address           - indirizzo email
#   link                    - link
#   subscription            - iscrizione
#   unsubscribe             - disiscriversi
#   mail                    - email (femminile)
#   one-way hash            - hash irreversibile

## Mail dates

date-format =
    { $day ->
        [1] 1º
       *[other] { $day }
    } { $month } { $year }, ore { $time } UTC
date-month-1 = gennaio
date-month-2 = febbraio
date-month-3 = marzo
date-month-4 = aprile
date-month-5 = maggio
date-month-6 = giugno
date-month-7 = luglio
date-month-8 = agosto
date-month-9 = settembre
date-month-10 = ottobre
date-month-11 = novembre
date-month-12 = dicembre

## Durations

duration-second =
    { $n ->
        [one] { $n } secondo
       *[other] { $n } secondi
    }
duration-minute =
    { $n ->
        [one] { $n } minuto
       *[other] { $n } minuti
    }
duration-hour =
    { $n ->
        [one] { $n } ora
       *[other] { $n } ore
    }
duration-day =
    { $n ->
        [one] { $n } giorno
       *[other] { $n } giorni
    }
duration-and = { $init } e { $last }
duration-separator = {", "}
duration-per = { $n } ogni { $duration }

## page

page-back-to = Torna a { $site }
page-privacy = Cosa conserviamo e per quanto tempo
page-languages = In altre lingue:

## errors

errors-unavailable-title = Riprova
errors-unavailable = Al momento non è stato possibile completare l'operazione. Riprova tra un minuto.
errors-not-found-title = Pagina non trovata
errors-not-found = Qui non c'è nessun modulo di iscrizione.
errors-not-found-link = Vai al modulo di iscrizione
errors-incomplete-title = Questo link è incompleto
errors-incomplete = Sembra che il link sia stato troncato o modificato. Aprilo di nuovo dall'email, oppure copia l'indirizzo completo nel browser.
errors-refused-title = Non è stato possibile completare l'operazione
errors-refused = Non è stato possibile leggere la richiesta. Torna alla pagina e riprova.
errors-timeout = La richiesta non è arrivata in tempo. Riprova.
errors-internal = Qualcosa è andato storto da parte nostra. Riprova tra un minuto.

## signup

signup-title = Iscrizione: { $list }
signup-heading = Iscriviti a { $list }
signup-intro = Inserisci il tuo indirizzo email. Ti invieremo un link: l'iscrizione sarà valida solo dopo che l'avrai aperto e avrai confermato.
signup-email-label = Indirizzo email
signup-honeypot-label = Lascia vuoto questo campo
signup-submit = Iscriviti
signup-choose-title = Iscrizione
signup-choose = Scegli una lista:
signup-several-title = Iscrizione
signup-several-heading = Iscrizione
signup-lists-legend = Quali liste vuoi ricevere?
signup-several-consent = Voglio ricevere via email le liste che ho selezionato. Posso disiscrivermi da ciascuna in qualsiasi momento.
signup-no-list-ticked = Seleziona almeno una lista.
signup-optional = facoltativo
signup-choose-option = Scegli
signup-field-missing = Compila il campo «{ $field }».
signup-field-invalid = Controlla il campo «{ $field }»: scegli una delle opzioni oppure scrivi un testo più breve, su una sola riga.
signup-unreadable = Non è stato possibile leggere il modulo. Riprova.
signup-unsupported = Il modulo è stato inviato in un formato che questo servizio non riconosce.
signup-too-large = Il modulo era troppo grande. Inserisci solo il tuo indirizzo email.
signup-origin-not-allowed = Questo modulo non può essere usato dal sito da cui è stato inviato.
signup-invalid-email = Inserisci un indirizzo email valido, per esempio nome@example.com.
signup-consent-required = Seleziona la casella per accettare di ricevere queste email.
signup-unknown-list = Questo modulo rimanda a una lista che non esiste.
signup-invalid-source = Questo modulo invia una provenienza che questo servizio non accetta. Segnalalo ai gestori del sito.
signup-unknown-tag = Questo modulo invia un'etichetta che la lista non conosce. Segnalalo ai gestori del sito.
signup-domain-not-allowed = Gli indirizzi di questo dominio non possono essere usati per iscriversi qui. Usa un altro indirizzo email.
signup-rate-limited = Troppe iscrizioni dalla tua rete. Riprova più tardi.
signup-storage-unavailable = Al momento non è stato possibile salvare la tua iscrizione. Riprova tra un minuto.

## check inbox

check-inbox-title = Controlla la tua casella di posta
check-inbox-sent = Se l'indirizzo può ricevere email, un messaggio è in arrivo. Apri il link che contiene e premi il pulsante per confermare.
check-inbox-sent-for = Se l'indirizzo può ricevere email, un messaggio su { $list } è in arrivo. Apri il link che contiene e premi il pulsante per confermare.
check-inbox-nothing-arrived = Dopo qualche minuto non è arrivato niente? Controlla nella cartella dello spam. Il link vale solo per un tempo limitato; puoi semplicemente iscriverti di nuovo.
check-inbox-open-inbox = Apri { $provider }

## surge

surge-title = Ancora un passaggio
surge-unusual = In questo momento il sito registra un traffico insolito, quindi invia le email di conferma solo a chi le richiede.
surge-ask = Premi il pulsante e la tua email di conferma partirà subito.
surge-button = Inviami l'email di conferma
surge-not-you = Non ti sei iscritto tu? Chiudi questa pagina e non verrà inviato nulla.

## confirm

confirm-title = Conferma la tua iscrizione: { $list }
confirm-heading = Conferma la tua iscrizione
confirm-intro = Hai chiesto di ricevere { $list } via email. Premi il pulsante per confermare; finché non lo fai, non ti verrà inviato nulla.
confirm-email-label = Il tuo indirizzo email
confirm-email-hint = Scrivi l'indirizzo a cui è stata inviata questa email. Così i programmi che controllano automaticamente i link non possono confermare al posto tuo.
confirm-button = Conferma l'iscrizione
confirm-not-you = Non l'hai chiesto tu? Chiudi semplicemente questa pagina: senza conferma non riceverai nient'altro.
confirm-wrong-address = Non è l'indirizzo a cui è stato inviato questo link. Scrivilo di nuovo.
confirm-already-title = Iscrizione già confermata
confirm-already = Questo indirizzo è già iscritto a { $list }. Non devi fare nient'altro.
confirm-done-title = Iscrizione confermata
confirm-done = Grazie. Il tuo indirizzo ora è iscritto a { $list }.
confirm-done-any = Grazie. Il tuo indirizzo ora è iscritto.
confirm-expired-title = Questo link è scaduto
confirm-expired = Il link di conferma non è più valido: è scaduto, è stato sostituito da un'email più recente oppure è già stato usato. Puoi iscriverti di nuovo.
confirm-sign-up-again = Iscriviti di nuovo

## manage

manage-title = Rimuovi il mio indirizzo
manage-intro = Il tuo indirizzo verrà rimosso da { $list }. Non riceverai più email da questa lista.
manage-intro-any = Il tuo indirizzo verrà rimosso dalla lista per cui è stato inviato questo link. Non riceverai più email da questa lista.
manage-button = Rimuovi il mio indirizzo
manage-removed-title = Indirizzo rimosso
manage-removed = Il tuo indirizzo è stato rimosso da { $list }. Non riceverai più email da questa lista.
manage-removed-any = Il tuo indirizzo è stato rimosso. Non riceverai più email da questa lista.

## preferences

preferences-title = Le tue preferenze email
preferences-intro = Seleziona le liste di { $site } che vuoi ricevere, deseleziona quelle che non vuoi più e salva.
preferences-legend = Liste
preferences-pending = In attesa della tua conferma.
preferences-kept = Cosa ci hai indicato al momento dell'iscrizione:
preferences-save = Salva
preferences-remove-all-heading = Rimuovi il mio indirizzo
preferences-remove-all-intro = Oppure rimuovi il tuo indirizzo da tutte queste liste in una volta. Non riceverai più email da nessuna di esse.
preferences-remove-all = Rimuovimi da tutte
preferences-saved-title = Preferenze salvate
preferences-saved = Le tue scelte per { $site } sono state salvate. Riceverai email solo dalle liste che hai selezionato.
preferences-saved-any = Le tue scelte sono state salvate. Riceverai email solo dalle liste che hai selezionato.
preferences-unreadable-title = Non è stato possibile leggere il modulo
preferences-unreadable = Non è stato modificato nulla. Apri di nuovo il link dall'email e salva ancora una volta.

## privacy

privacy-title = Privacy: { $list }
privacy-heading = Cosa succede al tuo indirizzo
privacy-intro = Questa pagina descrive cosa viene conservato quando ti iscrivi a { $list } e per quanto tempo.
privacy-stored-heading = Cosa viene conservato
privacy-stored = Il tuo indirizzo email, la lista, la versione del testo di consenso che hai accettato ({ $version }) e il testo stesso, quando ti sei iscritto, e quando e come hai confermato (compreso quanto tempo dopo l'email). Se il modulo li indica, anche il punto da cui ti sei iscritto (per esempio «homepage-footer») e gli argomenti che elenca.
privacy-fields = Il modulo chiede anche: { $fields }. Quello che inserisci lì viene conservato con la tua iscrizione, per lo stesso tempo del resto, e mostrato nella tua pagina delle preferenze.
privacy-no-ip = Il tuo indirizzo IP non viene conservato. Per limitare gli abusi, signupd conta le iscrizioni per rete usando un hash irreversibile della rete, mai l'indirizzo stesso: { $limits }. Un contatore copre al massimo { $duration } e viene cancellato alla pulizia successiva.
privacy-mail-heading = Le email
privacy-mail = Ricevi un'email con un link di conferma e, se ti iscrivi di nuovo, al massimo una nuova ogni { $duration }. Finché non confermi non viene inviato nient'altro.
privacy-unconfirmed = Se non confermi, il link smette di funzionare { $duration } dopo l'ultima email e il tuo indirizzo viene cancellato alla pulizia successiva.
privacy-neighbourhood = Inoltre tutte le reti di uno stesso vicinato (un blocco di indirizzi di uno stesso provider) vengono contate insieme: { $limits }.
privacy-never-mailed = Se non è stato ancora possibile inviare l'email di conferma (quando molte persone si iscrivono contemporaneamente), il tuo indirizzo viene cancellato { $duration } dopo l'iscrizione, che l'email sia partita o no.
privacy-cap =
    Perché nessuno possa intasare la tua casella inserendo il tuo indirizzo in molti moduli, uno stesso indirizzo riceve al massimo { $n ->
        [one] { $n } email
       *[other] { $n } email
    } di conferma in 24 ore, contando tutte le liste di questo servizio. A questo scopo un hash irreversibile del tuo indirizzo viene conservato per un giorno insieme all'ora di ciascuna di queste email.
privacy-reputation = Quando confermi, un hash irreversibile della tua rete (un blocco di indirizzi di uno stesso provider) viene conservato insieme al giorno, per { $duration }: quando molte persone si iscrivono contemporaneamente, le email verso le reti da cui le persone confermano partono per prime. Nient'altro della conferma viene conservato insieme a esso.
privacy-removal-heading = Rimuovere il tuo indirizzo
privacy-removal = Ogni email contiene un link per rimuovere il tuo indirizzo. Se lo usi, il tuo indirizzo viene cancellato. Ne resta solo un hash irreversibile, perché non riceva mai più email senza una nuova conferma (o mai più, se hai indicato che l'iscrizione non era tua).
privacy-shared = Quando confermi o rimuovi il tuo indirizzo, ne vengono informati i sistemi del gestore, con il tuo indirizzo e ciò che hai accettato.
privacy-contact = Domande? Scrivi a { $address }.

## mail

mail-greeting = Ciao,
mail-asked = qualcuno (speriamo tu) ha chiesto di ricevere { $list } a questo indirizzo.
mail-how = Per confermare, apri questo link e premi il pulsante «{ $button }»:
mail-confirm-link = Conferma la mia iscrizione
mail-copy = Oppure copia questo indirizzo nel browser:
mail-until = Il link è valido fino al { $date }. Finché non confermi, non ti verrà inviato nient'altro.
mail-not-you = Non l'hai chiesto tu? Puoi ignorare questa email oppure rimuovere definitivamente questo indirizzo:
mail-remove-for-good = Rimuovi questo indirizzo
mail-welcome = il tuo indirizzo ora è iscritto a { $list }. Grazie per la conferma.
mail-preferences-any-time = Nella tua pagina delle preferenze puoi scegliere in qualsiasi momento cosa ricevere da noi, oppure disiscriverti:
mail-preferences-link = Apri la mia pagina delle preferenze
mail-automated = Questo è un messaggio automatico.
mail-privacy = Cosa conserviamo e per quanto tempo:
mail-confirm-subject = Conferma la tua iscrizione
mail-welcome-subject = Iscrizione confermata

## language

language-name = Italiano
